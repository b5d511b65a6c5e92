import AsyncHTTPClient
import CourierCore

extension ProxyConfiguration.Server {
    /// AsyncHTTPClient's form of the server.
    var clientProxy: HTTPClient.Configuration.Proxy {
        switch kind {
        case .socks5:
            return .socksServer(host: host, port: port)
        case .http:
            let authorization = username.map {
                HTTPClient.Authorization.basic(username: $0, password: password ?? "")
            }
            return .server(host: host, port: port, authorization: authorization)
        }
    }
}
