import Courier
import Foundation
import Testing

@testable import CourierCore

/// RFC 6265 §5.1.1 dates: the three formats servers send, two-digit years, and every reason to
/// reject a date.
@Suite struct CookieDateTests {
    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),  // RFC 1123
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),  // RFC 850
        ("Sun Nov  6 08:49:37 1994", 784_111_777),  // asctime
        ("Wed, 09 Jun 2021 10:18:14 GMT", 1_623_233_894),  // RFC 6265 §3.1's example
        ("Thu, 01-Jan-1970 00:00:01 GMT", 1),
        ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),  // past 32-bit time_t
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),  // leap year divisible by 400
        ("Mon, 01 Jan 1601 00:00:00 GMT", -11_644_473_600),  // the earliest year allowed
        ("1 jan 2069 0:0:0", 3_124_224_000),  // lower case, one-digit fields
        ("6 NOVEMBER 94 08:49:37 +0800", 784_111_777),  // long month name; zone ignored
        ("08:49:37 1994 Nov 06", 784_111_777),  // any order
        ("Sun, 06 Nov 1994 08:49:37GMT", 784_111_777),  // a time token may end in non-digits
    ])
    func parses(text: String, seconds: Int) {
        #expect(CookieDate.parse(text) == Date(timeIntervalSince1970: TimeInterval(seconds)), "\(text)")
    }

    @Test func twoDigitYears() {
        #expect(CookieDate.parse("01 Jan 70 00:00:00") == Date(timeIntervalSince1970: 0))
        #expect(CookieDate.parse("01 Jan 99 00:00:00") == Date(timeIntervalSince1970: 915_148_800))
        #expect(CookieDate.parse("01 Jan 00 00:00:00") == Date(timeIntervalSince1970: 946_684_800))
    }

    @Test(arguments: [
        "",
        "not a date",
        "Sun, 06 Nov 1994",  // no time
        "08:49:37 Nov 1994",  // no day of month
        "06 1994 08:49:37",  // no month
        "06 Nov 08:49:37",  // no year
        "32 Nov 1994 08:49:37",  // day out of range
        "00 Nov 1994 08:49:37",
        "31 Nov 1994 08:49:37",  // November has 30 days
        "29 Feb 1900 08:49:37",  // 1900 is not a leap year
        "06 Nov 1994 24:00:00",
        "06 Nov 1994 08:60:00",
        "06 Nov 1994 08:49:60",
        "06 Nov 1600 08:49:37",  // before 1601
        "06 Nov 1994 008:49:37",  // three-digit hour
        "06 Nov 19940 08:49:37",  // five-digit year
        "06 Xyz 1994 08:49:37",
        "\u{0}\r\n",
        "Sun,06Nov1994 08:49:37GMT",  // "06Nov1994" is read as a day of month, so no month is found
    ])
    func rejects(text: String) {
        #expect(CookieDate.parse(text) == nil, "\(text.debugDescription)")
    }
}
