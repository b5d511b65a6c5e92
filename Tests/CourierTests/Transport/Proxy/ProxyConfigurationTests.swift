import Courier
import Foundation
import Testing

@testable import CourierCore

/// Proxy URLs and the environment, as curl reads them; passwords never printed.
@Suite struct ProxyConfigurationTests {
    @Test func aProxyURLAsCurlTakesIt() throws {
        let server = try ProxyConfiguration.Server(url: "http://us%40er:p%3Ass@proxy.test:3128")
        #expect(server.kind == .http)
        #expect(server.host == "proxy.test")
        #expect(server.port == 3128)
        #expect(server.username == "us@er")
        #expect(server.password == "p:ss")
        let bare = try ProxyConfiguration.Server(url: "proxy.test")
        #expect(bare.port == 1080)
        #expect(bare.kind == .http)
        let socks = try ProxyConfiguration.Server(url: "socks5h://[::1]:9050")
        #expect(socks.kind == .socks5)
        #expect(socks.host == "::1")
        #expect(socks.description == "socks5://[::1]:9050")
    }

    @Test func unusableProxyURLsAreTypedErrorsWithoutThePassword() {
        for text in [
            "https://u:hunter2@proxy.test", "socks4://proxy.test", "http://u:hunter2@:8080", "socks5://u:hunter2@h",
        ] {
            let error = #expect(throws: CourierError.self) { try ProxyConfiguration.Server(url: text) }
            #expect(error?.code == .invalidProxyConfiguration, "\(text)")
            #expect(!(error?.message.contains("hunter2") ?? true), "\(error?.message ?? "")")
        }
    }

    @Test func descriptionsRedactThePassword() throws {
        let server = try ProxyConfiguration.Server(url: "http://me:hunter2@proxy.test:8080")
        let configuration = ProxyConfiguration(http: server, https: server, noProxy: NoProxyList("localhost"))
        for text in [server.description, server.debugDescription, configuration.description, "\(configuration)"] {
            #expect(!text.contains("hunter2"), "\(text)")
            #expect(text.contains("me:<redacted>@proxy.test:8080"), "\(text)")
        }
    }

    @Test func theEnvironmentAsCurlReadsIt() throws {
        let configuration = try #require(
            try ProxyConfiguration.fromEnvironment([
                "http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2", "HTTPS_PROXY": "secure:3",
                "no_proxy": "localhost,.corp.test", "NO_PROXY": "ignored.test",
            ]))
        #expect(configuration.http?.host == "lower")
        #expect(configuration.https?.host == "secure")
        #expect(configuration.https?.port == 3)
        let plain = try #require(URL(string: "http://example.test/"))
        let corp = try #require(URL(string: "https://wiki.corp.test/"))
        let ignored = try #require(URL(string: "https://ignored.test/"))
        #expect(configuration.server(for: plain)?.host == "lower")
        #expect(configuration.server(for: corp) == nil)
        #expect(configuration.server(for: ignored)?.host == "secure")
    }

    @Test func allProxyFillsTheGapsAndCGIIgnoresUpperCaseHTTPProxy() throws {
        let all = try #require(try ProxyConfiguration.fromEnvironment(["ALL_PROXY": "socks5://gate:1080"]))
        #expect(all.http?.kind == .socks5)
        #expect(all.https?.host == "gate")
        let cgi = try ProxyConfiguration.fromEnvironment(["HTTP_PROXY": "http://attacker:1", "REQUEST_METHOD": "GET"])
        #expect(cgi == nil)
        #expect(try ProxyConfiguration.fromEnvironment(["http_proxy": "", "PATH": "/bin"]) == nil)
    }

    @Test func aBadVariableIsNamedAndItsPasswordHidden() {
        let error = #expect(throws: CourierError.self) {
            try ProxyConfiguration.fromEnvironment(["https_proxy": "ftp://me:hunter2@proxy.test"])
        }
        #expect(error?.code == .invalidProxyConfiguration)
        #expect(error?.message.hasPrefix("https_proxy: ") == true)
        #expect(!(error?.message.contains("hunter2") ?? true))
    }

    @Test func unixSocketsAndOtherSchemesNeverUseAProxy() throws {
        let server = ProxyConfiguration.Server(host: "proxy.test", port: 3128)
        let configuration = ProxyConfiguration(http: server, https: server)
        #expect(configuration.server(for: try #require(URL(string: "http+unix://%2Ftmp%2Fs/x"))) == nil)
        #expect(configuration.server(for: try #require(URL(string: "HTTPS://example.test/")))?.port == 3128)
    }
}
