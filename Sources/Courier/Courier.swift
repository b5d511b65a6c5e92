// What `import Courier` brings: the session and its types (CourierCore) and the default
// transport on AsyncHTTPClient (CourierAsyncHTTPClient), as one module, so that code written
// before the split (issue 43) compiles unchanged.
@_exported import CourierAsyncHTTPClient
@_exported import CourierCore
import Foundation

extension SessionManager {
    /// Makes a manager that sends through `transport` or, when nil, through
    /// ``AsyncHTTPClientTransport/shared``; a given transport stays the caller's (the manager
    /// never shuts it down). Throws nothing.
    public convenience init(
        configuration: Configuration = Configuration(),
        transport: (any Transport)? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.init(
            configuration: configuration, transport: transport ?? AsyncHTTPClientTransport.shared,
            interceptor: interceptor, eventMonitors: eventMonitors)
    }
}

extension HTTPSessionManager {
    /// Makes a manager on a new ``SessionManager``, sending through `transport` or, when nil,
    /// ``AsyncHTTPClientTransport/shared``. Drop it when done; see ``SessionManager`` for the
    /// lifetime rules. Throws nothing.
    public convenience init(
        baseURL: URL? = nil, configuration: SessionManager.Configuration = SessionManager.Configuration(),
        transport: (any Transport)? = nil, interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.init(
            baseURL: baseURL, configuration: configuration, transport: transport ?? AsyncHTTPClientTransport.shared,
            interceptor: interceptor, eventMonitors: eventMonitors)
    }
}
