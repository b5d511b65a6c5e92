import Foundation

extension HeaderRedaction {
    /// What replaces a secret in a URL given to telemetry, as OpenTelemetry's `url.full` asks.
    public static let telemetryPlaceholder = "REDACTED"

    /// Lower-case query parameter names whose values are secrets: OpenTelemetry's list for
    /// `url.full` (signed-URL keys and signatures) and the common token names.
    public static let sensitiveQueryNames: Set<String> = [
        "awsaccesskeyid", "signature", "sig", "x-goog-signature", "x-amz-signature", "x-amz-credential",
        "x-amz-security-token", "access_token", "id_token", "refresh_token", "token", "api_key", "apikey",
        "password", "client_secret", "secret",
    ]

    /// `url` as a span attribute or metric may carry it: a user name and password in the
    /// user-info become `REDACTED:REDACTED` and the values of ``sensitiveQueryNames`` become
    /// `REDACTED` (OpenTelemetry HTTP semantic conventions, `url.full`); the rest is unchanged.
    public func redactedForTelemetry(_ url: URL) -> String {
        // Most URLs have neither user-info nor a query: no parsing for them.
        guard url.user != nil || url.query != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        if components.percentEncodedUser != nil { components.percentEncodedUser = Self.telemetryPlaceholder }
        if components.percentEncodedPassword != nil { components.percentEncodedPassword = Self.telemetryPlaceholder }
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                let name = (item.name.removingPercentEncoding ?? item.name).lowercased()
                guard item.value != nil, Self.sensitiveQueryNames.contains(name) else { return item }
                return URLQueryItem(name: item.name, value: Self.telemetryPlaceholder)
            }
        }
        return components.string ?? url.absoluteString
    }
}
