/// How far a coded body may expand: any size up to ``ratioFreeSize`` decoded bytes, then at
/// most ``ratio`` decoded bytes per encoded byte received
/// (`AsyncHTTPClientTransport.Configuration.decompressionRatioLimit`).
struct DecompressionLimit: Sendable, Equatable {
    /// Decoded bytes per encoded byte, at least 1.
    let ratio: Int
    /// Decoded bytes let through whatever the ratio, at least 0.
    let ratioFreeSize: Int

    init(ratio: Int, ratioFreeSize: Int) {
        self.ratio = max(1, ratio)
        self.ratioFreeSize = max(0, ratioFreeSize)
    }
}
