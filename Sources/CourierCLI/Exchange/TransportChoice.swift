import ArgumentParser
import Courier
import CourierURLSession

/// `--transport`: which ``Transport`` a command sends through, so that the same command line can
/// be compared over AsyncHTTPClient and URLSession from outside.
enum TransportChoice: String, CaseIterable, ExpressibleByArgument, Sendable {
    case asyncHTTPClient = "asynchttpclient"
    case urlSession = "urlsession"

    /// A URLSession transport, after refusing the options it cannot honour: FoundationNetworking
    /// offers no trust, client-certificate or proxy settings per session.
    /// - Throws: ``CLIError`` (usage) naming the option that needs `--transport asynchttpclient`.
    static func urlSessionTransport(for connection: ConnectionOptions) throws -> URLSessionTransport {
        var refused: [String] = []
        if !["yes", "true", "1"].contains(connection.verify.lowercased()) { refused.append("--verify") }
        if connection.certificate != nil { refused.append("--cert") }
        if !connection.proxies.isEmpty { refused.append("--proxy") }
        if connection.http1Only { refused.append("--http1.1") }
        // libcurl keeps its own floor (TLS 1.2 in curl 7.88); FoundationNetworking cannot move it.
        if connection.minimumTLSVersion != .tls12 { refused.append("--ssl") }
        guard refused.isEmpty else {
            throw CLIError.usage(
                "\(refused.joined(separator: ", ")) cannot be used with --transport urlsession; use --transport asynchttpclient"
            )
        }
        var configuration = URLSessionTransport.Configuration()
        if let seconds = connection.idleTimeout {
            configuration.readTimeout = .milliseconds(Int64(min(seconds, 1e9) * 1000))
        }
        return URLSessionTransport(configuration: configuration)
    }
}
