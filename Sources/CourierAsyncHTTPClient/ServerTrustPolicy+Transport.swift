import AsyncHTTPClient
import CourierCore
import NIOSSL

extension AsyncHTTPClientTransport.Configuration {
    /// Enforces `policy` on every HTTPS connection of the transport made with this
    /// configuration, by replacing ``tlsConfiguration`` with
    /// `ServerTrustPolicy.makeTLSConfiguration(base:)` of its current value.
    /// - Throws: `CourierError` `invalidTrustPolicy` for a policy that cannot be enforced.
    public mutating func apply(_ policy: ServerTrustPolicy) throws {
        tlsConfiguration = try policy.makeTLSConfiguration(base: tlsConfiguration ?? .makeClientConfiguration())
    }
}

extension ServerTrustPolicy {
    /// Sets `configuration.tlsConfiguration` to `makeTLSConfiguration(base:)` of its current value.
    ///
    /// AsyncHTTPClient retries failed connection attempts (a refused certificate included)
    /// with backoff until the request's deadline unless
    /// `configuration.connectionPool.retryConnectionEstablishment` is false; a transport that
    /// wants trust failures reported at once should turn it off.
    /// - Throws: as `makeTLSConfiguration(base:)`.
    public func apply(to configuration: inout HTTPClient.Configuration) throws {
        configuration.tlsConfiguration = try makeTLSConfiguration(
            base: configuration.tlsConfiguration ?? .makeClientConfiguration())
    }
}
