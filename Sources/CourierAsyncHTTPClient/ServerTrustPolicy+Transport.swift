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
