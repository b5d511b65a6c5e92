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
        let place = endpoint(of: url)
        if let failure = error as? NIOConnectionError {
            if failure.connectionErrors.isEmpty, failure.dnsAError != nil || failure.dnsAAAAError != nil {
                return "cannot connect to \(target): the host name \"\(failure.host)\" did not resolve"
            }
            let causes = failure.connectionErrors.compactMap { $0.error as? IOError }
            if let first = causes.first {
                return "cannot connect to \(target): \(reason(errno: first.errnoCode, place: place))"
            }
        }
        if let failure = error as? IOError {
            switch failure.errnoCode {
            case ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ETIMEDOUT:
                return "cannot connect to \(target): \(reason(errno: failure.errnoCode, place: place))"
            default:
                return "the connection to \(target) failed: \(reason(errno: failure.errnoCode, place: place))"
            }
        }
        return "cannot connect to \(target) or the connection broke: \(error)"
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
