import Foundation

/// The headers every ``HTTPRequestSerializer`` starts with, computed once per process.
enum DefaultHeaders {
    /// Courier's version, for the `User-Agent` of executables that declare none (no Info.plist on Linux).
    static let libraryVersion = "0.2.0"

    /// `Accept-Language` as AFNetworking writes it: the preferred languages, most preferred
    /// first, each with a quality falling by 0.1 from 1 (`en-US;q=1, fr;q=0.9`), at most six.
    /// Nil when the system reports no language.
    static let acceptLanguage: String? = acceptLanguage(for: Locale.preferredLanguages)

    /// `User-Agent` as `<executable>/<version> (<OS> <version>)`, ASCII only.
    static let userAgent: String = userAgent(
        executable: ProcessInfo.processInfo.processName,
        version: Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
            ?? Bundle.main.object(forInfoDictionaryKey: "CFBundleVersion") as? String
            ?? libraryVersion,
        operatingSystem: operatingSystemName,
        systemVersion: systemVersion)

    static func acceptLanguage(for languages: [String]) -> String? {
        let qualities = ["1", "0.9", "0.8", "0.7", "0.6", "0.5"]
        let components = zip(languages.lazy.map(asciiOnly).filter { !$0.isEmpty }, qualities).map { "\($0);q=\($1)" }
        return components.isEmpty ? nil : components.joined(separator: ", ")
    }

    static func userAgent(executable: String, version: String, operatingSystem: String, systemVersion: String) -> String
    {
        asciiOnly("\(executable)/\(version) (\(operatingSystem) \(systemVersion))")
    }

    /// Removes accents by decomposition, then drops whatever is still not printable ASCII,
    /// so the header never carries bytes a server may reject (AFNetworking transliterates).
    static func asciiOnly(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.value >= 0x20 && scalar.value < 0x7F {
            result.append(scalar)
        }
        return String(result)
    }

    static var operatingSystemName: String {
        #if os(Linux)
            return "Linux"
        #elseif os(macOS)
            return "macOS"
        #elseif os(iOS)
            return "iOS"
        #elseif os(tvOS)
            return "tvOS"
        #elseif os(watchOS)
            return "watchOS"
        #elseif os(Windows)
            return "Windows"
        #else
            return "Unknown"
        #endif
    }

    static var systemVersion: String {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
    }
}
