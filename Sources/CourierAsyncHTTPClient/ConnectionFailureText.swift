import CourierCore
import Foundation
import NIOCore
import NIOPosix

/// Says in words why a connection failed, where NIO's descriptions read
/// `connection reset (error set): Connection refused) (errno: 111)`: a name that did not
/// resolve, a refused or unreachable address, a reset, each with the host and port it was about.
enum ConnectionFailureText {
    /// The message for a failed connection to `url`.
    static func message(for error: any Error, url: URL) -> String {
        let target = url.absoluteString
        let connection = error as? NIOConnectionError
        if let connection, connection.connectionErrors.isEmpty,
            connection.dnsAError != nil || connection.dnsAAAAError != nil
        {
            return "cannot connect to \(target): the host name \"\(connection.host)\" did not resolve"
        }
        // The first attempt's failure stands for a connection that was never made.
        let attempt = connection?.connectionErrors.lazy.compactMap { $0.error as? IOError }.first
        guard let failure = attempt ?? error as? IOError else {
            return "cannot connect to \(target) or the connection broke: \(error)"
        }
        let why = reason(errno: failure.errnoCode, place: endpoint(of: url))
        let connecting =
            attempt != nil || [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT].contains(failure.errnoCode)
        return connecting ? "cannot connect to \(target): \(why)" : "the connection to \(target) failed: \(why)"
    }

    /// `host:port`, with the scheme's port when the URL names none.
    static func endpoint(of url: URL) -> String {
        var host = url.host ?? url.absoluteString
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(host):\(port)"
    }

    private static func reason(errno code: Int32, place: String) -> String {
        switch code {
        case ECONNREFUSED: return "the connection was refused (nothing listens at \(place))"
        case ECONNRESET: return "\(place) reset the connection"
        case EPIPE: return "\(place) closed the connection while the request was being sent"
        case ENETUNREACH: return "the network of \(place) is unreachable"
        case EHOSTUNREACH: return "the host \(place) is unreachable"
        case ETIMEDOUT: return "\(place) did not answer in time"
        default: return "\(String(cString: strerror(code))) (errno \(code), \(place))"
        }
    }
}
