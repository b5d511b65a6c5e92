import Courier
import Foundation

/// Chooses the local file name for `--download` without `--output`, as httpie does, but
/// reduced by Courier's ``ContentDisposition/safeFileName`` to a safe base name: no
/// directories, no `..`, no hidden file, no control characters.
///
/// Content-Disposition (RFC 6266: `filename*` preferred over `filename`) comes first, then the
/// last URL path segment, then `index`. An extension is added from the
/// Content-Type when the name has none. An existing file is never overwritten: `name-1.ext`,
/// `name-2.ext`, … are tried instead.
enum DownloadFileName {
    /// The longest name produced, in bytes (common file systems allow 255).
    static let maximumLength = 200

    /// The suggested base name for a response.
    static func suggested(contentDisposition: String?, url: URL, contentType: String?) -> String {
        let segment = url.path.split(separator: "/").last.map(String.init) ?? ""
        let serverName = contentDisposition.flatMap(ContentDisposition.init)?.fileName
        var name =
            serverName.flatMap { ContentDisposition.safeFileName(from: $0, maxUTF8Length: maximumLength) }
            ?? ContentDisposition.safeFileName(from: segment, maxUTF8Length: maximumLength) ?? "index"
        if !name.contains("."), let ext = contentType.flatMap(MediaType.init).flatMap(fileExtension(for:)) {
            name += "." + ext
        }
        return name
    }

    /// `name` if no file of that name exists in `directory`, else the first free `name-N`.
    static func unique(
        _ name: String, in directory: URL, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> String {
        if !exists(directory.appendingPathComponent(name).path) { return name }
        let (stem, ext) = split(name)
        var counter = 1
        while true {
            let candidate = ext.isEmpty ? "\(stem)-\(counter)" : "\(stem)-\(counter).\(ext)"
            if !exists(directory.appendingPathComponent(candidate).path) { return candidate }
            counter += 1
        }
    }

    private static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    private static let extensionsByEssence: [String: String] = [
        "application/json": "json", "text/html": "html", "text/plain": "txt", "application/xml": "xml",
        "text/xml": "xml", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
        "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz", "text/csv": "csv",
        "application/octet-stream": "bin",
    ]

    private static func fileExtension(for mediaType: MediaType) -> String? {
        extensionsByEssence[mediaType.essence]
    }
}
