import Courier
import Foundation
import NIOCore
import NIOSSL

/// A session manager and the transport it sends through, shut down together.
struct CLISession: Sendable {
    let manager: SessionManager
    let transport: any Transport

    /// Cancels what is left and closes connections; failures here change nothing for the user.
    func shutdown() async {
        try? await manager.shutdown()
        try? await transport.shutdown()
    }
}

/// How to connect: `--verify`, `--cert`/`--cert-key` and `--http1.1`/`--http2`.
struct ConnectionOptions: Sendable {
    var verify = "yes"
    /// A PEM client certificate (chain), with its key inside unless ``certificateKey`` is given.
    var certificate: String?
    var certificateKey: String?
    /// `--http1.1`: never negotiate HTTP/2.
    var http1Only = false
    /// `--http2`: HTTP/2 where the server offers it, which is the default (kept for curl's
    /// spelling, and refused beside `--http1.1`).
    var http2 = false
    /// `--ssl`: the oldest TLS version accepted.
    var minimumTLSVersion: TLSVersionOption = .tls12
    /// Ask for gzip/deflate and decode it (not for downloads, which keep the bytes as served,
    /// so that `--continue`'s byte ranges line up, as httpie's downloads ask for identity).
    var decompressesResponses = true
    /// `--decompression-ratio`: past 1 GiB decoded, the most decoded bytes per byte received.
    var decompressionRatio = 100
    /// `--proxy` values (`PROTOCOL:URL`), laid over the `*_proxy` environment variables.
    var proxies: [String] = []
    /// `--transport`: AsyncHTTPClient (the default) or URLSession.
    var transport: TransportChoice = .asyncHTTPClient
    /// `--timeout`: seconds to wait for the connection and for each read (httpie's meaning); the
    /// transports' defaults when nil.
    var idleTimeout: Double?
    /// `--max-time`: the whole exchange's seconds, which bound connecting too.
    var maxTime: Double?
}

/// Makes the session a command sends through, with the connection options and `--max-redirects`.
enum SessionFactory {
    /// Environment variables naming the CA bundle to trust instead of the system's when
    /// `--verify` is left at yes: requests' (so httpie's), then curl's and OpenSSL's.
    static let caBundleVariables = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"]

    /// A manager over a fresh ``AsyncHTTPClientTransport``; the caller shuts it down.
    /// - Throws: ``CLIError`` (usage) for a `--verify` value that is neither yes, no nor a readable file.
    static func make(
        connection: ConnectionOptions = ConnectionOptions(), maxRedirects: Int = 30, temporaryDirectory: URL? = nil,
        cookieStorage: CookieJar? = nil, interceptor: (any RequestInterceptor)? = nil
    ) throws -> CLISession {
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.tlsConfiguration = try tlsConfiguration(verify: connection.verify)
        if let certificate = connection.certificate {
            var tls = transportConfiguration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
            try addClientCertificate(certificate, key: connection.certificateKey, to: &tls)
            transportConfiguration.tlsConfiguration = tls
        }
        // HTTP/2 is offered for every request unless --http1.1 says not, as curl does.
        transportConfiguration.allowsHTTP2 = !connection.http1Only
        transportConfiguration.minimumTLSVersion = connection.minimumTLSVersion.version
        transportConfiguration.decompressesResponses = connection.decompressesResponses
        transportConfiguration.decompressionRatioLimit = connection.decompressionRatio
        if let seconds = connection.idleTimeout {
            let wait = TimeAmount.nanoseconds(Int64(min(seconds, 1e9) * 1e9))
            transportConfiguration.connectTimeout = wait
            transportConfiguration.readTimeout = wait
        }
        if let seconds = connection.maxTime {
            // The request fails at its deadline, but AsyncHTTPClient finishes a connection attempt
            // (TCP, TLS, a proxy's CONNECT) before it shuts down: one that outlived --max-time held
            // the exit until its own timeout (10 s against a full accept queue).
            let whole = TimeAmount.nanoseconds(Int64(min(seconds, 1e9) * 1e9))
            transportConfiguration.connectTimeout = min(transportConfiguration.connectTimeout ?? whole, whole)
        }
        transportConfiguration.proxy = try ProxyOption.resolve(
            connection.proxies, environment: ProcessInfo.processInfo.environment)
        var configuration = SessionManager.Configuration()
        configuration.redirectPolicy = RedirectPolicy(maximumRedirects: maxRedirects)
        if let temporaryDirectory { configuration.temporaryDirectory = temporaryDirectory }
        if let cookieStorage { configuration.cookieStorage = cookieStorage }
        configuration.cache = CacheOption.current
        let transport: any Transport =
            connection.transport == .urlSession
            ? try TransportChoice.urlSessionTransport(for: connection)
            : AsyncHTTPClientTransport(configuration: transportConfiguration)
        return CLISession(
            manager: SessionManager(
                configuration: configuration, transport: transport, interceptor: interceptor,
                eventMonitors: [MetricsCapture.shared]),
            transport: transport)
    }

    /// Presents the PEM certificate chain in `path` with the private key in `keyPath` (or in
    /// the same file), as curl's and httpie's `--cert`/`--cert-key`.
    /// - Throws: ``CLIError`` (usage) quoting the file that cannot be read or parsed.
    static func addClientCertificate(_ path: String, key keyPath: String?, to tls: inout TLSConfiguration) throws {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw CLIError.usage("--cert \"\(path)\": not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw CLIError.usage("--cert \"\(path)\": no certificate in the file") }
        let keyFile = keyPath ?? path
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            let option = keyPath == nil ? "--cert" : "--cert-key"
            throw CLIError.usage("\(option) \"\(keyFile)\": no readable PEM private key (\(error))")
        }
        tls.certificateChain = chain.map { .certificate($0) }
        tls.privateKey = .privateKey(key)
    }

    private static func isReadableRegularFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isReadableFile(atPath: path)
    }

    /// More than any CA bundle holds (Mozilla's is about 220 KB).
    static let bundleSizeLimit = 8 << 20

    /// Loads the certificates of the CA bundle at `path` before anything connects: a file that
    /// is not one failed only at the handshake, with NIOSSL's error and a path of its build.
    /// - Throws: ``CLIError`` (usage) starting with `name` when `path` is not a regular file of
    ///   at most ``bundleSizeLimit`` bytes holding at least one PEM certificate.
    static func checkBundle(_ path: String, named name: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CLIError.usage("\(name): cannot read it (\(String(cString: strerror(errno))))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CLIError.usage("\(name): not a regular file, so not a CA bundle")
        }
        guard info.st_size <= bundleSizeLimit else {
            throw CLIError.usage("\(name): larger than \(bundleSizeLimit >> 20) MiB, so not a CA bundle")
        }
        let certificates = try? NIOSSLCertificate.fromPEMFile(path)
        guard let certificates, !certificates.isEmpty else {
            throw CLIError.usage("\(name): not a CA bundle (no PEM certificate in it)")
        }
    }

    /// nil keeps the platform's default verification (when no ``caBundleVariables`` names a file).
    static func tlsConfiguration(
        verify: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> TLSConfiguration? {
        switch verify.lowercased() {
        case "yes", "true", "1":
            // The CA bundle variables httpie (through requests) and curl read, in their order.
            // One that names no readable file (a directory, a path gone stale) is passed over,
            // as it would fail only at a TLS handshake, and plain http never needs it.
            for name in caBundleVariables {
                guard let path = environment[name], !path.isEmpty, Self.isReadableRegularFile(path) else { continue }
                try checkBundle(path, named: "\(name)=\"\(path)\"")
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .file(path)
                return tls
            }
            return nil
        case "no", "false", "0":
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return tls
        default:
            guard FileManager.default.isReadableFile(atPath: verify) else {
                throw CLIError.usage("--verify \"\(verify)\": expected yes, no, or a readable CA bundle file")
            }
            try checkBundle(verify, named: "--verify \"\(verify)\"")
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(verify)
            return tls
        }
    }
}
