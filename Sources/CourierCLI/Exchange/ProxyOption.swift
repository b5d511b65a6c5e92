import Courier
import Foundation

/// `--proxy PROTOCOL:URL` (httpie's form, repeatable) over the `*_proxy` environment variables,
/// which are honoured by default as curl and httpie honour them.
///
/// `PROTOCOL` is `http`, `https` or `all` (both); an empty URL (`--proxy https:`) sends that
/// scheme direct whatever the environment says. `no_proxy`/`NO_PROXY` applies to proxies from
/// either source, as curl applies it to `-x` (httpie ignores it for `--proxy`).
enum ProxyOption {
    /// The proxies for the transport, or nil when neither the options nor the environment name one.
    /// - Throws: ``CLIError`` (usage) for a malformed `--proxy`; ``CLIError`` naming the variable
    ///   for an unusable `*_proxy` value. Passwords are redacted in both.
    static func resolve(_ options: [String], environment: [String: String]) throws -> ProxyConfiguration? {
        var configuration: ProxyConfiguration
        do {
            configuration = try ProxyConfiguration.fromEnvironment(environment) ?? ProxyConfiguration()
        } catch let error as CourierError {
            throw CLIError.failure("\(error.message) (from the environment)")
        }
        if configuration.noProxy.isEmpty {
            let text = environment["no_proxy"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["NO_PROXY"] ?? ""
            configuration.noProxy = NoProxyList(text)
        }
        for option in options {
            let shown = HeaderRedaction.redactingURLPasswords(in: option)
            guard let colon = option.firstIndex(of: ":") else {
                throw CLIError.usage("--proxy \"\(shown)\": expected PROTOCOL:URL, such as http:http://127.0.0.1:3128")
            }
            let scheme = option[..<colon].lowercased()
            let value = String(option[option.index(after: colon)...])
            let server: ProxyConfiguration.Server?
            do {
                server = value.isEmpty ? nil : try ProxyConfiguration.Server(url: value)
            } catch let error as CourierError {
                throw CLIError.usage("--proxy \"\(shown)\": \(error.message)")
            }
            switch scheme {
            case "http": configuration.http = server
            case "https": configuration.https = server
            case "all":
                configuration.http = server
                configuration.https = server
            default:
                throw CLIError.usage("--proxy \"\(shown)\": the protocol is http, https or all, not \"\(scheme)\"")
            }
        }
        guard configuration.http != nil || configuration.https != nil else { return nil }
        return configuration
    }
}
