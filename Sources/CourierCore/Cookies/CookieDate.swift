import Foundation

/// The cookie date algorithm of RFC 6265 §5.1.1.
///
/// It does not parse one fixed format: it splits the text at delimiters and looks for a time,
/// a day of month, a month name and a year among the tokens, in any order. That one
/// algorithm reads the three formats servers actually send:
///
/// - RFC 1123: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// Every date is read as UTC; a time-zone token is ignored, as the RFC asks. Calendar
/// arithmetic is done here rather than through `Calendar`, so the result does not depend on
/// the process's locale or time zone.
enum CookieDate {
    /// The instant `text` names, or nil when the RFC says to ignore it (a missing part, a value
    /// out of range, a year before 1601, a day that the month does not have).
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        for token in tokens(Array(text.utf8)) {
            if time == nil, let parsed = hmsTime(token) {
                time = parsed
            } else if dayOfMonth == nil, let day = leadingDigits(token, minimum: 1, maximum: 2) {
                dayOfMonth = day
            } else if month == nil, let parsed = monthNumber(token) {
                month = parsed
            } else if year == nil, let parsed = leadingDigits(token, minimum: 2, maximum: 4) {
                year = parsed
            }
        }

        guard let time, let dayOfMonth, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(dayOfMonth), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            dayOfMonth <= daysIn(month: month, year: year)
        else { return nil }

        let days = daysSinceUnixEpoch(year: year, month: month, day: dayOfMonth)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// RFC 6265 delimiters: HTAB, space to `/`, `;` to `@`, `[` to `` ` ``, `{` to `~`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
        default: return false
        }
    }

    private static func tokens(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(whereSeparator: isDelimiter)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `minimum…maximum` digits, then nothing or a non-digit and anything: the RFC's
    /// `day-of-month` and `year` productions.
    private static func leadingDigits(_ token: ArraySlice<UInt8>, minimum: Int, maximum: Int) -> Int? {
        let digits = token.prefix(while: isDigit)
        guard digits.count >= minimum, digits.count <= maximum else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT`, then nothing or a non-digit and anything. `:` is
    /// not a delimiter (0x3A sits between the digit and `;` ranges), so a time is one token.
    private static func hmsTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var index = token.startIndex
        for position in 0..<3 {
            let start = index
            while index < token.endIndex, isDigit(token[index]), index - start < 3 { index += 1 }
            let count = index - start
            guard count >= 1, count <= 2 else { return nil }
            fields.append(token[start..<index].reduce(0) { $0 * 10 + Int($1 - 0x30) })
            if position < 2 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            }
        }
        if index < token.endIndex, isDigit(token[index]) { return nil }
        return (fields[0], fields[1], fields[2])
    }

    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    /// The month whose three-letter name starts the token, case-insensitively (`Nov`, `november`).
    private static func monthNumber(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3).map { $0 | 0x20 }, as: UTF8.self)
        return monthNames.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's
    /// days-from-civil, which needs no tables and handles every year the RFC allows).
    private static func daysSinceUnixEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
