import Foundation

extension Request {
    /// This request with credentials in its URL (`http://user:password@host/`) moved into a
    /// Basic `Authorization` header (RFC 7617), unless the request has one already, and taken
    /// out of the URL: user-info is never sent (RFC 3986 §3.2.1 deprecates it), and no message
    /// quoting the URL shows the password. A URL without user-info is returned as it is.
    ///
    /// Every request a ``SessionManager`` runs passes through it, however it was made, as every
    /// request ``HTTPRequestSerializer`` makes does.
    func movingURLCredentialsToAuthorization() -> Request {
        guard url.user != nil || url.password != nil else { return self }
        let (stripped, credentials) = HTTPRequestSerializer.splittingCredentials(from: url)
        var request = self
        request.url = stripped
        if let credentials, request.headerFields[.authorization] == nil {
            let encoded = Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            request.headerFields[.authorization] = "Basic \(encoded)"
        }
        return request
    }
}
