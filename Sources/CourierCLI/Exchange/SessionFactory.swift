import Courier
import Foundation
import NIOSSL

/// A session manager and the transport it sends through, shut down together.
struct CLISession: Sendable {
    let manager: SessionManager
    let transport: AsyncHTTPClientTransport

    /// Cancels what is left and closes connections; failures here change nothing for the user.
    func shutdown() async {
        try? await manager.shutdown()
        try? await transport.shutdown()
    }
}

/// Makes the session a command sends through, with `--verify` and `--max-redirects`.
enum SessionFactory {
    /// A manager over a fresh ``AsyncHTTPClientTransport``; the caller shuts it down.
    /// - Throws: ``CLIError`` (usage) for a `--verify` value that is neither yes, no nor a readable file.
    static func make(
        verify: String = "yes", maxRedirects: Int = 30, temporaryDirectory: URL? = nil, cookieStorage: CookieJar? = nil
    ) throws -> CLISession {
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.tlsConfiguration = try tlsConfiguration(verify: verify)
        var configuration = SessionManager.Configuration()
        configuration.redirectPolicy = RedirectPolicy(maximumRedirects: maxRedirects)
        if let temporaryDirectory { configuration.temporaryDirectory = temporaryDirectory }
        if let cookieStorage { configuration.cookieStorage = cookieStorage }
        let transport = AsyncHTTPClientTransport(configuration: transportConfiguration)
        return CLISession(manager: SessionManager(configuration: configuration, transport: transport), transport: transport)
    }

    /// nil keeps the platform's default verification.
    static func tlsConfiguration(verify: String) throws -> TLSConfiguration? {
        switch verify.lowercased() {
        case "yes", "true", "1": return nil
        case "no", "false", "0":
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return tls
        default:
            guard FileManager.default.isReadableFile(atPath: verify) else {
                throw CLIError.usage("--verify \"\(verify)\": expected yes, no, or a readable CA bundle file")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(verify)
            return tls
        }
    }
}
