import Foundation

extension SessionManager {
    /// Sends one exchange (a first attempt, a retry or a redirect hop) through the transport with
    /// the configured ``Configuration/cookieStorage`` applied.
    ///
    /// The stored cookies for the hop's URL go into a `Cookie` header unless the caller set one,
    /// and the response's `Set-Cookie` fields are stored before the session decides what comes
    /// next, so a cookie set by a redirect reaches the hop it points to. The `Cookie` header is
    /// added to a copy: the task's request never carries it, so a redirect to another origin
    /// cannot inherit cookies that were chosen for this one.
    func sendHandlingCookies(_ request: Request, context: ExchangeContext, cache: CacheParticipation? = nil)
        async throws -> TransportResponse
    {
        guard request.httpShouldHandleCookies, let storage = configuration.cookieStorage else {
            return try await sendConsultingCache(request, context: context, cache: cache)
        }
        var outgoing = request
        // The jar first: it answers at once when it is empty, where the field lookup does not.
        if let header = storage.cookieHeaderValue(for: request.url), outgoing.headerFields[.cookie] == nil {
            outgoing.headerFields[.cookie] = header
        }
        let response = try await sendConsultingCache(outgoing, context: context, cache: cache)
        storage.setCookies(fromResponseHeaderFields: response.head.headerFields, receivedFrom: request.url)
        return response
    }
}
