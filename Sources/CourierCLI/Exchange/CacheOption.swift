import Courier
import Foundation
import NIOConcurrencyHelpers

/// `--cache DIR`: a private HTTP cache (RFC 9111) kept in `DIR` across runs.
///
/// Off unless asked for, as curl and httpie have no cache: a command line that silently
/// answered from a store would surprise their users. With it, a GET whose stored response is
/// still fresh is answered without the network (its `Age` field says how old it is), a stale
/// one is revalidated, and request items steer it as any HTTP client would:
/// `Cache-Control:no-cache` revalidates, `Cache-Control:no-store` bypasses it, and
/// `Cache-Control:only-if-cached` answers 504 when nothing fresh is stored. Downloads (`-d`)
/// bypass it, as the library's downloads do by default.
enum CacheOption {
    /// The cache of this run, made from `--cache` before the session is.
    private static let cache = NIOLockedValueBox<HTTPCache?>(nil)

    /// The cache the session should use; nil without `--cache`.
    static var current: HTTPCache? { cache.withLockedValue { $0 } }

    /// Opens the cache in `directory` and makes `request` use it (a printed body goes through
    /// the library's stream, which takes part in the cache only when asked).
    /// - Throws: ``CLIError`` (usage) when the directory cannot be made or read.
    static func use(directory: String, for request: inout Request, downloading: Bool) throws {
        let url = URL(fileURLWithPath: (directory as NSString).expandingTildeInPath)
        let opened: HTTPCache
        do {
            opened = try HTTPCache(directory: url)
        } catch {
            throw CLIError.usage("--cache \"\(directory)\": \((error as? CourierError)?.message ?? "\(error)")")
        }
        cache.withLockedValue { $0 = opened }
        if !downloading { request.cachePolicy = .useCache }
    }
}
