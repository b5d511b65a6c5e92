/// The codes of the cookies layer.
extension CourierError.Code {
    /// A cookie built by a program or read from a file has an invalid name, value, domain or path.
    ///
    /// Thrown by ``Cookie``'s validating initializer.
    public static let invalidCookie = CourierError.Code("invalidCookie")

    /// A cookies.txt file has a line that is not a valid Netscape cookie line.
    ///
    /// Thrown by ``CookieJar``'s cookies.txt reader; the message names the line.
    public static let invalidCookieFile = CourierError.Code("invalidCookieFile")
}
