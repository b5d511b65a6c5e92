import Foundation

extension ProxyConfiguration {
    /// The proxies the environment names, as curl reads them, or nil when it names none.
    ///
    /// - `http_proxy` for `http://` URLs. `HTTP_PROXY` is read too (httpie and Go do; curl
    ///   reads the lower-case name only), the lower-case one first, and never when
    ///   `REQUEST_METHOD` is set: a CGI program gets the request's `Proxy:` header as
    ///   `HTTP_PROXY` ("httpoxy").
    /// - `https_proxy`, then `HTTPS_PROXY`, for `https://` URLs.
    /// - `all_proxy`, then `ALL_PROXY`, for either scheme that has none of its own.
    /// - `no_proxy`, then `NO_PROXY`: see ``NoProxyList``.
    ///
    /// A variable that is set but empty counts as unset. Values are parsed by
    /// ``Server/init(url:)``.
    /// - Throws: ``CourierError`` `.invalidProxyConfiguration` naming the variable whose value
    ///   is not a usable proxy URL (its password redacted).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> ProxyConfiguration?
    {
        func value(_ names: String...) -> (name: String, text: String)? {
            for name in names {
                if let text = environment[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
                    return (name, text)
                }
            }
            return nil
        }
        func server(_ found: (name: String, text: String)?) throws -> Server? {
            guard let found else { return nil }
            do {
                return try Server(url: found.text)
            } catch var error as CourierError {
                error.message = "\(found.name): \(error.message)"
                throw error
            }
        }
        let cgi = environment["REQUEST_METHOD"] != nil
        let all = try server(value("all_proxy", "ALL_PROXY"))
        let http = try server(cgi ? value("http_proxy") : value("http_proxy", "HTTP_PROXY")) ?? all
        let https = try server(value("https_proxy", "HTTPS_PROXY")) ?? all
        guard http != nil || https != nil else { return nil }
        let noProxy = value("no_proxy", "NO_PROXY")?.text ?? ""
        return ProxyConfiguration(http: http, https: https, noProxy: NoProxyList(noProxy))
    }
}
