/// Where the session meets its ``HTTPCache``: between the cookie handling and the transport,
/// so that a stored response gets its cookies stored as a network one does, and a `Vary:
/// Cookie` sees the `Cookie` header that goes out.
extension SessionManager {
    /// One exchange: through the cache when there is one and the task takes part, else
    /// straight to the transport.
    /// - Throws: as ``Transport/send(_:context:)``, and `.cacheMiss` (see ``CachePolicy/onlyIfCached``).
    @inline(__always)  // Without a cache, one async call less per exchange.
    func sendConsultingCache(
        _ request: Request, context: ExchangeContext, cache participation: CacheParticipation?
    ) async throws -> TransportResponse {
        guard let participation, let cache = configuration.cache else {
            return try await transport.send(request, context: context)
        }
        return try await cache.exchange(request, participation: participation) { outgoing in
            try await transport.send(outgoing, context: context)
        }
    }
}

extension SessionTask {
    /// How an exchange of this task uses the manager's cache; nil without one. Downloads and
    /// streams take part only when their request asks (``CachePolicy/automatic``).
    func cacheParticipation(for request: Request) -> CacheParticipation? {
        guard manager.configuration.cache != nil else { return nil }
        return CacheParticipation(request.cachePolicy, isBulkTransfer: kind == .download || streamHandoff != nil)
    }
}
