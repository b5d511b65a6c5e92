import Courier
import Foundation
import Testing

@testable import CourierCore

private struct Nested: Encodable {
    let a = "a"
}

private struct Profile: Encodable {
    let name = "Zoë Smith"
    let age = 30
    let ratio = 1.5
    let active = true
    let tags = ["a", "b"]
    let address = ["city": "Köln"]
    let nested = Nested()
    let missing: String? = nil
}

private struct Optionals: Encodable {
    let one = "one"
    let two: String? = nil
}

private struct ManualRoot: Encodable {
    func encode(to encoder: any Encoder) throws {
        var root = encoder.container(keyedBy: FormCodingKey.self)
        var list = root.nestedUnkeyedContainer(forKey: FormCodingKey(stringValue: "root"))
        var inner = list.nestedUnkeyedContainer()
        try inner.encode(1)
        try inner.encode(2)
        var keyed = list.nestedContainer(keyedBy: FormCodingKey.self)
        try keyed.encode("string", forKey: FormCodingKey(stringValue: "s"))
    }
}

private struct CustomError: Error, Equatable {}

@Suite struct URLEncodedFormEncoderTests {
    let encoder = URLEncodedFormEncoder()

    @Test func leavesOfEveryType() throws {
        #expect(try encoder.encode(["a": "a"]) == "a=a")
        #expect(try encoder.encode(["a": 1]) == "a=1")
        #expect(try encoder.encode(["a": 1.123456]) == "a=1.123456")
        #expect(try encoder.encode(["a": 1.0]) == "a=1.0")
        #expect(try encoder.encode(["a": Float(1)]) == "a=1.0")
        #expect(try encoder.encode(["a": UInt8(1)]) == "a=1")
        #expect(try encoder.encode(["a": Int64(-1)]) == "a=-1")
        #expect(try encoder.encode(["a": Decimal(string: "1.25")]) == "a=1.25")
        #expect(try encoder.encode(["a": true]) == "a=1")
    }

    @Test func structsNestAndSortByDefault() throws {
        #expect(
            try encoder.encode(Profile())
                == "active=1&address%5Bcity%5D=K%C3%B6ln&age=30&name=Zo%C3%AB%20Smith&nested%5Ba%5D=a&ratio=1.5&tags%5B%5D=a&tags%5B%5D=b"
        )
        #expect(try encoder.encode(["one": "one", "two": "2", "three": "1"]) == "one=one&three=1&two=2")
    }

    @Test func manualContainersNest() throws {
        #expect(try encoder.encode(ManualRoot()) == "root%5B%5D%5B%5D=1&root%5B%5D%5B%5D=2&root%5B%5D%5Bs%5D=string")
    }

    @Test func unsortedKeepsEncodingOrder() throws {
        let unsorted = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)
        #expect(try unsorted.encode(Optionals()) == "one=one")
        #expect(try unsorted.encode(["list": ["z", "a"]]) == "list%5B%5D=z&list%5B%5D=a")
    }

    @Test func arrayEncodings() throws {
        #expect(try URLEncodedFormEncoder(arrayEncoding: .noBrackets).encode(["array": [1, 2]]) == "array=1&array=2")
        #expect(
            try URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key).\(index + 1)" }).encode([
                "array": [1, 2]
            ]) == "array.1=1&array.2=2")
        #expect(
            try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode([
                "foo": [["bar": 2], ["qux": 3], ["quy": 4]]
            ])
                == "foo%5B0%5D%5Bbar%5D=2&foo%5B1%5D%5Bqux%5D=3&foo%5B2%5D%5Bquy%5D=4")
        #expect(
            try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode([
                "foo": [["bar": true], ["qux": false], ["quy": true]]
            ])
                == "foo%5B0%5D%5Bbar%5D=1&foo%5B1%5D%5Bqux%5D=0&foo%5B2%5D%5Bquy%5D=1")
    }

    @Test func boolEncodings() throws {
        #expect(try URLEncodedFormEncoder(boolEncoding: .numeric).encode(["bool": true]) == "bool=1")
        #expect(try URLEncodedFormEncoder(boolEncoding: .literal).encode(["bool": true]) == "bool=true")
        #expect(try URLEncodedFormEncoder(boolEncoding: .literal).encode(["bool": false]) == "bool=false")
    }

    @Test func dataEncodings() throws {
        let data = Data("data".utf8)
        #expect(try encoder.encode(["data": data]) == "data=ZGF0YQ%3D%3D")
        #expect(
            try URLEncodedFormEncoder(dataEncoding: .deferredToData).encode(["data": Data([1, 2])])
                == "data%5B%5D=1&data%5B%5D=2")
        #expect(
            try URLEncodedFormEncoder(dataEncoding: .custom { String(decoding: $0, as: UTF8.self) }).encode([
                "data": data
            ]) == "data=data")
        #expect(throws: CustomError()) {
            try URLEncodedFormEncoder(dataEncoding: .custom { _ in throw CustomError() }).encode(["data": data])
        }
    }

    @Test func dateEncodings() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123.456)
        #expect(try URLEncodedFormEncoder(dateEncoding: .deferredToDate).encode(["date": date]) == "date=123.456")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .secondsSince1970).encode(["date": date]) == "date=978307323.456")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970).encode(["date": date])
                == "date=978307323456.0")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .iso8601).encode(["date": date]) == "date=2001-01-01T00%3A02%3A03Z")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSSS"
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .formatted(.init(formatter))).encode(["date": date])
                == "date=2001-01-01%2000%3A02%3A03.4560")
        #expect(
            try URLEncodedFormEncoder(dateEncoding: .custom { "\($0.timeIntervalSinceReferenceDate)" }).encode([
                "date": date
            ]) == "date=123.456")
        #expect(throws: CustomError()) {
            try URLEncodedFormEncoder(dateEncoding: .custom { _ in throw CustomError() }).encode(["date": date])
        }
    }

    @Test func keyEncodings() throws {
        let value = ["oneTwoThree": "oneTwoThree"]
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encode(value) == "one_two_three=oneTwoThree")
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .convertToKebabCase).encode(value) == "one-two-three=oneTwoThree")
        #expect(try URLEncodedFormEncoder(keyEncoding: .capitalized).encode(value) == "OneTwoThree=oneTwoThree")
        #expect(try URLEncodedFormEncoder(keyEncoding: .lowercased).encode(value) == "onetwothree=oneTwoThree")
        #expect(try URLEncodedFormEncoder(keyEncoding: .uppercased).encode(value) == "ONETWOTHREE=oneTwoThree")
        #expect(try URLEncodedFormEncoder(keyEncoding: .custom { _ in "A" }).encode(value) == "A=oneTwoThree")
        #expect(URLEncodedFormEncoder.KeyEncoding.splitWords("myURLProperty", separator: "_") == "my_url_property")
        #expect(URLEncodedFormEncoder.KeyEncoding.splitWords("URLProperty", separator: "_") == "url_property")
        #expect(URLEncodedFormEncoder.KeyEncoding.splitWords("oneTWO", separator: "_") == "one_two")
        #expect(URLEncodedFormEncoder.KeyEncoding.splitWords("a1B", separator: "-") == "a1-b")
        #expect(
            try URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase).encode(["oneTwo": ["threeFour": 1]])
                == "one_two%5Bthree_four%5D=1")
    }

    @Test func keyPathEncodings() throws {
        #expect(try encoder.encode(["a": ["b": "b"]]) == "a%5Bb%5D=b")
        #expect(try URLEncodedFormEncoder(keyPathEncoding: .dots).encode(["a": ["b": "b"]]) == "a.b=b")
        #expect(try URLEncodedFormEncoder(keyPathEncoding: .init { "-\($0)" }).encode(["a": ["b": "b"]]) == "a-b=b")
    }

    @Test func nilEncodings() throws {
        let single: [String: String?] = ["a": nil]
        #expect(try encoder.encode(single) == "")
        #expect(try encoder.encode(Optionals()) == "one=one")
        #expect(try URLEncodedFormEncoder(nilEncoding: .null).encode(single) == "a=null")
        #expect(try URLEncodedFormEncoder(nilEncoding: .null).encode(Optionals()) == "one=one&two=null")
        #expect(try URLEncodedFormEncoder(nilEncoding: .dropValue).encode(single) == "a=")
        #expect(try URLEncodedFormEncoder(nilEncoding: .dropValue).encode(Optionals()) == "one=one&two=")
        #expect(
            try URLEncodedFormEncoder(nilEncoding: .null).encode(["list": [1, nil, 3]])
                == "list%5B%5D=1&list%5B%5D=3&list%5B%5D=null")
    }

    @Test func spaceEncodingsAndEscaping() throws {
        #expect(
            try URLEncodedFormEncoder(spaceEncoding: .plusReplaced).encode(["spaces": "replace with spaces"])
                == "spaces=replace+with+spaces")
        #expect(try encoder.encode(["spaces": "a b"]) == "spaces=a%20b")
        #expect(
            try URLEncodedFormEncoder(allowedCharacters: .alphanumerics).encode(["allowed": "?/"]) == "allowed=%3F%2F")
        #expect(
            try encoder.encode(["reserved": ":#[]@!$&'()*+,;="])
                == "reserved=%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D")
        #expect(
            try encoder.encode(["illegal": " \"#%<>[]\\^`{}|"]) == "illegal=%20%22%23%25%3C%3E%5B%5D%5C%5E%60%7B%7D%7C")
        #expect(try encoder.encode(["foo&bar": "baz&qux", "foobar": "bazqux"]) == "foo%26bar=baz%26qux&foobar=bazqux")
        #expect(try encoder.encode(["?foo?": "?bar?"]) == "?foo?=?bar?")
        #expect(try encoder.encode(["foo": "/bar/baz/qux"]) == "foo=/bar/baz/qux")
        #expect(try encoder.encode([" foo ": " bar "]) == "%20foo%20=%20bar%20")
        #expect(try encoder.encode(["+foo+": "+bar+"]) == "%2Bfoo%2B=%2Bbar%2B")
        #expect(try encoder.encode(["percent%": "%25"]) == "percent%25=%2525")
    }

    /// The default allowed set takes a byte-table path; it must give exactly what Foundation's
    /// `addingPercentEncoding` gives for that set (plus the space), in both space styles.
    @Test func defaultSetByteTableMatchesFoundation() throws {
        var allowed = URLEncodedFormEncoder.queryAllowedCharacters
        allowed.insert(" ")
        var rng = SeededGenerator(seed: 7)
        var samples = ["", " ", "a b", "  x  ", "+ +", "%20", "ä ö", "😀 👍🏽", "\u{0} \u{7F}", "a\u{301} b"]
        for _ in 0..<200 { samples.append(RandomTrees.string(&rng, maxLength: 12)) }
        for text in samples {
            let foundation = try #require(text.addingPercentEncoding(withAllowedCharacters: allowed))
            for (style, space) in [(URLEncodedFormEncoder.SpaceEncoding.percentEscaped, "%20"), (.plusReplaced, "+")] {
                let expected = foundation.replacingOccurrences(of: " ", with: space)
                let encoded = try URLEncodedFormEncoder(spaceEncoding: style).encode(["k": text])
                #expect(encoded == "k=" + expected, "\(Array(text.unicodeScalars))")
                let keyed = try URLEncodedFormEncoder(spaceEncoding: style).encode([text: "v"])
                #expect(keyed == expected + "=v", "\(Array(text.unicodeScalars))")
            }
        }
    }

    @Test func aKeyedRootIsRequired() {
        for value in [AnyEncodable("string"), AnyEncodable([1, 2]), AnyEncodable(1)] {
            do {
                _ = try encoder.encode(value)
                Issue.record("expected an error")
            } catch let error as CourierError {
                #expect(error.code == .invalidFormRoot)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func encodeDataIsTheUTF8OfTheText() throws {
        #expect(try encoder.encodeData(["a": "ä"]) == Data("a=%C3%A4".utf8))
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
