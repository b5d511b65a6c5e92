import ArgumentParser
import NIOSSL

/// `--ssl`: the oldest TLS version a connection may use, in httpie's spelling (`tls1`,
/// `tls1.1`, `tls1.2`), plus `tls1.3`. Unlike httpie's option, which pins one version, it is a
/// floor: newer versions are still negotiated.
enum TLSVersionOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case tls1 = "tls1"
    case tls11 = "tls1.1"
    case tls12 = "tls1.2"
    case tls13 = "tls1.3"

    /// swift-nio-ssl's name for the version.
    var version: TLSVersion {
        switch self {
        case .tls1: .tlsv1
        case .tls11: .tlsv11
        case .tls12: .tlsv12
        case .tls13: .tlsv13
        }
    }
}
