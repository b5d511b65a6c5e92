/// Courier's own table from file extension to MIME type.
///
/// The same on every platform, unlike a lookup through the operating system (which Linux may
/// not have, and which differs between macOS versions). Extensions match case-insensitively.
public enum MIMETypes {
    /// The type used when an extension is unknown or missing.
    public static let fallback = "application/octet-stream"

    /// The MIME type for `pathExtension` (with or without a leading dot), or
    /// `application/octet-stream` when the table does not know it.
    public static func type(forPathExtension pathExtension: String) -> String {
        var key = pathExtension.lowercased()
        if key.hasPrefix(".") { key.removeFirst() }
        return table[key] ?? fallback
    }

    /// The MIME type for the extension of the last path component of `fileName`.
    static func type(forFileName fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return fallback }
        return type(forPathExtension: String(fileName[fileName.index(after: dot)...]))
    }

    static let table: [String: String] = [
        // text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "md": "text/markdown", "markdown": "text/markdown",
        "ics": "text/calendar", "vcf": "text/vcard", "rtf": "application/rtf", "xml": "application/xml",
        "js": "text/javascript", "mjs": "text/javascript", "json": "application/json",
        "jsonld": "application/ld+json", "yaml": "application/yaml", "yml": "application/yaml",
        "toml": "application/toml", "swift": "text/x-swift", "c": "text/x-c", "h": "text/x-c",
        "py": "text/x-python", "sh": "application/x-sh", "srt": "application/x-subrip", "vtt": "text/vtt",
        // images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg",
        "gif": "image/gif", "bmp": "image/bmp", "webp": "image/webp", "svg": "image/svg+xml",
        "svgz": "image/svg+xml", "ico": "image/vnd.microsoft.icon", "tif": "image/tiff", "tiff": "image/tiff",
        "heic": "image/heic", "heif": "image/heif", "avif": "image/avif", "jxl": "image/jxl",
        "psd": "image/vnd.adobe.photoshop",
        // audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "oga": "audio/ogg", "ogg": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac",
        "mid": "audio/midi", "midi": "audio/midi", "weba": "audio/webm", "aif": "audio/aiff", "aiff": "audio/aiff",
        // video
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "ogv": "video/ogg", "avi": "video/x-msvideo", "mkv": "video/x-matroska", "mpeg": "video/mpeg",
        "mpg": "video/mpeg", "3gp": "video/3gpp", "ts": "video/mp2t", "flv": "video/x-flv", "wmv": "video/x-ms-wmv",
        // fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "eot": "application/vnd.ms-fontobject",
        // documents
        "pdf": "application/pdf", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "epub": "application/epub+zip", "key": "application/vnd.apple.keynote",
        "pages": "application/vnd.apple.pages", "numbers": "application/vnd.apple.numbers",
        // archives
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "bz2": "application/x-bzip2", "xz": "application/x-xz", "zst": "application/zstd",
        "7z": "application/x-7z-compressed", "rar": "application/vnd.rar", "tar": "application/x-tar",
        "jar": "application/java-archive", "apk": "application/vnd.android.package-archive",
        "ipa": "application/octet-stream", "dmg": "application/x-apple-diskimage",
        "deb": "application/vnd.debian.binary-package",
        "rpm": "application/x-rpm", "iso": "application/x-iso9660-image",
        // certificates and keys
        "cer": "application/pkix-cert", "crt": "application/x-x509-ca-cert", "der": "application/x-x509-ca-cert",
        "pem": "application/x-pem-file", "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        "p7b": "application/x-pkcs7-certificates", "crl": "application/pkix-crl", "csr": "application/pkcs10",
        // other
        "wasm": "application/wasm", "bin": "application/octet-stream",
        "exe": "application/vnd.microsoft.portable-executable",
        "plist": "application/x-plist", "sqlite": "application/vnd.sqlite3", "db": "application/vnd.sqlite3",
        "webmanifest": "application/manifest+json", "gpx": "application/gpx+xml",
        "kml": "application/vnd.google-earth.kml+xml",
        "atom": "application/atom+xml", "rss": "application/rss+xml", "xhtml": "application/xhtml+xml",
        "usdz": "model/vnd.usdz+zip", "glb": "model/gltf-binary", "gltf": "model/gltf+json", "obj": "model/obj",
        "stl": "model/stl",
    ]
}
