import ArgumentParser

/// `--decompression-ratio N|off`: past 1 GiB decoded, the most decoded bytes per byte received
/// (``AsyncHTTPClientTransport/Configuration/decompressionRatioLimit``); `off` never refuses.
struct DecompressionRatioOption: ExpressibleByArgument, Sendable {
    /// The ratio; `Int.max` for `off`.
    var ratio: Int

    init(ratio: Int) {
        self.ratio = ratio
    }

    init?(argument: String) {
        if argument.lowercased() == "off" {
            ratio = .max
        } else if let value = Int(argument), value >= 1 {
            ratio = value
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { ratio == .max ? "off" : String(ratio) }
}
