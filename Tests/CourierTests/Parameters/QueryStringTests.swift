import Courier
import Foundation
import Testing

@testable import CourierCore

@Suite struct PercentEscapingTests {
    @Test func reservedCharactersAreEscapedExceptSlashAndQuestionMark() {
        #expect(
            QueryString.percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
        #expect(
            QueryString.percentEscaped(" :#[]@!$&'()*+,;=/?") == "%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?"
        )
    }

    @Test func unreservedCharactersStayLiteral() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?"
        #expect(QueryString.percentEscaped(unreserved) == unreserved)
    }

    @Test func everyOtherASCIIByteIsEscapedUpperCase() {
        for byte in UInt8(0)...UInt8(127) {
            let text = String(decoding: [byte], as: UTF8.self)
            let literal =
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || "-._~/?".utf8.contains(byte)
            let expected = literal ? text : "%" + String(format: "%02X", byte)
            #expect(QueryString.percentEscaped(text) == expected, "byte \(byte)")
        }
    }

    @Test func alreadyEscapedInputIsEscapedAgain() {
        #expect(
            QueryString.percentEscaped("%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F")
                == "%2520%2521%2522%2523%2524%2525%2526%2527%2528%2529%252A%252B%252C%252F")
    }

    @Test func nonASCIIIsEscapedAsUTF8() {
        #expect(QueryString.percentEscaped("ä") == "%C3%A4")
        #expect(QueryString.percentEscaped("URL编码") == "URL%E7%BC%96%E7%A0%81")
        #expect(QueryString.percentEscaped("😔") == "%F0%9F%98%94")
    }

    /// AFNetworking #3028: escaping in batches must not split the emoji that straddle a batch edge.
    @Test func longEmojiSequencesAreNotSplit() {
        var parameter = "!"
        while parameter.utf16.count < 50 { parameter += "👴🏿👷🏻👮🏽" }
        var expected = "%21"
        let group = "%F0%9F%91%B4%F0%9F%8F%BF%F0%9F%91%B7%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD"
        for _ in 0..<((parameter.utf16.count - 1) / 12) { expected += group }
        #expect(QueryString.percentEscaped(parameter) == expected)
        #expect(QueryString.encode(["test": .string(parameter)]) == "test=" + expected)
    }

    @Test func utf16InputWithValidPairsMatchesStringInput() throws {
        let text = "a😔b ä"
        #expect(try QueryString.percentEscaped(utf16: Array(text.utf16)) == QueryString.percentEscaped(text))
        #expect(try QueryString.percentEscaped(nsString: NSString(string: text)) == "a%F0%9F%98%94b%20%C3%A4")
    }

    @Test func loneSurrogatesAreAnErrorNotACrash() {
        let cases: [[UInt16]] = [
            [0x61, 0xD83D], [0xD83D, 0x61], [0xDE14], [0x61, 0xDE14, 0x62], [0xD83D, 0xD83D, 0xDE14],
        ]
        for units in cases {
            #expect(throws: CourierError.self) { try QueryString.percentEscaped(utf16: units) }
        }
        do {
            _ = try QueryString.percentEscaped(utf16: [0x61, 0xDE14])
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.code == .unpairedSurrogate)
            #expect(error.message.contains("0xDE14"))
            #expect(error.message.contains("offset 1"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

@Suite struct QueryStringEncodingTests {
    @Test func designExample() {
        let params: Parameters = ["key1": "value1", "key2": ["key": [1, "value"]], "flag": true]
        #expect(QueryString.encode(params) == "flag=1&key1=value1&key2%5Bkey%5D%5B%5D=1&key2%5Bkey%5D%5B%5D=value")
    }

    @Test func afnetworkingHelperVector() {
        #expect(QueryString.encode(["key": "value", "key1": "value&"]) == "key=value&key1=value%26")
        #expect(QueryString.encode(["a": 1, "b": 2, "c": 3]) == "a=1&b=2&c=3")
    }

    @Test func emptyParametersAndEmptyContainersProduceNothing() {
        #expect(QueryString.encode([:]) == "")
        #expect(QueryString.encode(["a": [], "b": [:], "c": .set([])]) == "")
        #expect(QueryString.encode(["a": [], "b": "x", "c": ["d": [:]]]) == "b=x")
    }

    @Test func leavesAreWrittenAsAFNetworkingDoes() {
        #expect(QueryString.encode(["t": true, "f": false]) == "f=0&t=1")
        #expect(QueryString.encode(["n": nil]) == "n")
        #expect(QueryString.encode(["n": nil, "a[b]": .null]) == "a%5Bb%5D&n")
        #expect(
            QueryString.encode(["d": 3.0, "e": 0.1, "g": -2.5, "h": 1e20, "z": -0.0])
                == "d=3&e=0.1&g=-2.5&h=1e%2B20&z=-0")
        #expect(QueryString.encode(["i": -42, "m": .int(Int.min)]) == "i=-42&m=-9223372036854775808")
        #expect(QueryString.encode(["data": .data(Data([0xFB, 0xFF, 0x00, 0x41]))]) == "data=%2B/8AQQ%3D%3D")
        #expect(QueryString.encode(["empty": ""]) == "empty=")
        #expect(QueryString.encode(["": "v"]) == "=v")
    }

    @Test func keysAreSortedOrdinallyAtEveryLevel() {
        let params: Parameters = [
            "b": ["z": 1, "Z": 2, "a": 3, "_": 4],
            "B": "upper",
            "a": "lower",
            "10": "ten",
            "9": "nine",
        ]
        #expect(
            QueryString.encode(params)
                == "10=ten&9=nine&B=upper&a=lower&b%5BZ%5D=2&b%5B_%5D=4&b%5Ba%5D=3&b%5Bz%5D=1")
    }

    @Test func ordinalOrderIsUTF16CodeUnitOrder() {
        // U+FF21 (fullwidth A) is one UTF-16 unit above the surrogates; 😀 is a surrogate pair.
        let keys = ["\u{FF21}", "😀", "é", "z", "\u{E000}"]
        let sorted = keys.sorted(by: OrdinalOrder.precedes)
        let expected = keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
        #expect(sorted == expected)
        #expect(sorted == ["z", "é", "😀", "\u{E000}", "\u{FF21}"])
        #expect(OrdinalOrder.precedes("a", "ab"))
        #expect(!OrdinalOrder.precedes("ab", "a"))
        #expect(!OrdinalOrder.precedes("a", "a"))
    }

    @Test func arraysKeepOrderUnderEmptyBrackets() {
        #expect(QueryString.encode(["a": [3, 1, 2]]) == "a%5B%5D=3&a%5B%5D=1&a%5B%5D=2")
        #expect(QueryString.encode(["a": [[1], ["k": "v"]]]) == "a%5B%5D%5B%5D=1&a%5B%5D%5Bk%5D=v")
    }

    @Test func setsAreSortedAndRepeatTheKeyWithoutBrackets() {
        #expect(QueryString.encode(["s": .set(["c", "a", "b"])]) == "s=a&s=b&s=c")
        #expect(QueryString.encode(["s": .set([10, 9, 1])]) == "s=1&s=10&s=9")
        #expect(QueryString.encode(["o": ["s": .set(["y", "x"])]]) == "o%5Bs%5D=x&o%5Bs%5D=y")
    }

    @Test func keysAndValuesAreEscaped() {
        #expect(QueryString.encode(["a b&c=d": "e f&g=h+i"]) == "a%20b%26c%3Dd=e%20f%26g%3Dh%2Bi")
        #expect(QueryString.encode(["ключ": ["ä": "ü"]]) == "%D0%BA%D0%BB%D1%8E%D1%87%5B%C3%A4%5D=%C3%BC")
    }

    @Test func pairsCarryUnescapedKeysAndLeaves() throws {
        let params: Parameters = ["key1": "value1", "key2": ["key": [1, "value"]], "flag": true, "n": nil]
        let pairs = try QueryString.pairs(params)
        #expect(pairs.map(\.key) == ["flag", "key1", "key2[key][]", "key2[key][]", "n"])
        #expect(pairs.map(\.value) == [true, "value1", 1, "value", nil])
        #expect(
            pairs.map(\.urlEncoded) == [
                "flag=1", "key1=value1", "key2%5Bkey%5D%5B%5D=1", "key2%5Bkey%5D%5B%5D=value", "n",
            ])
        #expect(QueryString.encode(pairs: pairs) == QueryString.encode(params))
    }

    @Test func formTextOfEachLeaf() {
        #expect(ParameterValue.bool(true).formText == "1")
        #expect(ParameterValue.bool(false).formText == "0")
        #expect(ParameterValue.double(2).formText == "2")
        #expect(ParameterValue.double(2.25).formText == "2.25")
        #expect(ParameterValue.double(.nan).formText == "nan")
        #expect(ParameterValue.double(.infinity).formText == "inf")
        #expect(ParameterValue.int(7).formText == "7")
        #expect(ParameterValue.data(Data("hi".utf8)).formText == "aGk=")
        #expect(ParameterValue.null.formText == nil)
        #expect(ParameterValue.array([1]).formText == nil)
        #expect(ParameterValue.dictionary(["a": 1]).formText == nil)
    }

    @Test func deepNestingDoesNotExhaustTheStack() throws {
        var value: ParameterValue = "leaf"
        for _ in 0..<2_000 { value = .array([value]) }
        let encoded = QueryString.encode(["k": value])
        #expect(encoded == "k" + String(repeating: "%5B%5D", count: 2_000) + "=leaf")
        #expect(try QueryString.pairs(["k": value]).count == 1)
    }

    /// The benchmark's shape (6,000 pairs); checked here for correctness only.
    @Test func benchmarkShapeEncodesAllPairs() throws {
        var params = Parameters()
        for index in 0..<1_000 {
            params["key\(index)"] = [
                "name": .string("value \(index) ä&="), "n": .int(index), "flag": .bool(index % 2 == 0),
                "list": [1, 2, 3],
            ]
        }
        let encoded = QueryString.encode(params)
        let parts = encoded.split(separator: "&")
        #expect(parts.count == 6_000)
        #expect(
            parts.prefix(6) == [
                "key0%5Bflag%5D=1", "key0%5Blist%5D%5B%5D=1", "key0%5Blist%5D%5B%5D=2", "key0%5Blist%5D%5B%5D=3",
                "key0%5Bn%5D=0", "key0%5Bname%5D=value%200%20%C3%A4%26%3D",
            ])
        #expect(try QueryString.pairs(params).count == 6_000)
    }
}

@Suite struct FoundationParameterTests {
    @Test func convertsJSONSerializationOutput() throws {
        let json =
            #"{"s":"x","i":7,"d":1.5,"t":true,"f":false,"n":null,"a":[1,"b",{"c":null}],"o":{"k":[]},"big":18446744073709551615}"#
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let params = try ParameterValue.parameters(foundation: object)
        let expected: Parameters = [
            "s": "x", "i": 7, "d": 1.5, "t": true, "f": false, "n": nil,
            "a": [1, "b", ["c": nil]], "o": ["k": []], "big": "18446744073709551615",
        ]
        #expect(params == expected)
    }

    @Test func convertsSwiftValuesSetsAndOptionals() throws {
        let missing: String? = nil
        let value: [String: Any] = [
            "flag": true, "count": UInt8(3), "ratio": Float(0.5), "data": Data([1]), "none": missing as Any,
            "set": Set(["b", "a"]), "nsset": NSSet(array: [1, 2]), "nested": ["x": [1, 2]] as NSDictionary,
        ]
        let params = try ParameterValue.parameters(foundation: value)
        #expect(params["flag"] == true)
        #expect(params["count"] == 3)
        #expect(params["ratio"] == 0.5)
        #expect(params["data"] == .data(Data([1])))
        #expect(params["none"] == .null)
        #expect(params["set"] == .set(["a", "b"]))
        #expect(params["nsset"] == .set([1, 2]))
        #expect(params["nested"] == ["x": [1, 2]])
    }

    @Test func unsupportedValueNamesItsKeyPath() {
        let value: [String: Any] = ["user": ["tags": ["a", "b", Date(timeIntervalSince1970: 0)]]]
        do {
            _ = try ParameterValue.parameters(foundation: value)
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.code == .unsupportedParameterValue)
            #expect(error.offendingInput == "user[tags][2]")
            #expect(error.message.contains("user[tags][2]"))
            #expect(error.message.contains("Date"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A value nested far past the limit is refused with the typed error, not a stack
    /// overflow in the runtime's bridging (which a 5,000-deep `[Any]` once caused).
    @Test func deepNestingIsATypedErrorAtAnyDepth() {
        for depth in [600, 5_000, 20_000] {
            var value: Any = "leaf"
            for _ in 0..<depth { value = [value] as [Any] }
            #expect(throws: CourierError.self, "\(depth)") {
                try ParameterValue.parameters(foundation: ["deep": value])
            }
        }
    }

    @Test func topLevelMustBeADictionary() {
        #expect(throws: CourierError.self) { try ParameterValue.parameters(foundation: [1, 2]) }
    }

    /// swift-corelibs-foundation stores NSString as a Swift String and so repairs a lone
    /// surrogate on creation; Apple's Foundation keeps it, and then conversion must refuse it.
    @Test func nsStringWithLoneSurrogateIsRejectedWhereFoundationKeepsIt() throws {
        var units: [unichar] = [0x61, 0xD800]
        let lone = NSString(characters: &units, length: 2)
        if lone.character(at: 1) != 0xD800 {
            #expect(try ParameterValue.parameters(foundation: ["k": lone] as [String: Any]) == ["k": "a\u{FFFD}"])
            return
        }
        do {
            _ = try ParameterValue.parameters(foundation: ["k": lone] as [String: Any])
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.code == .unpairedSurrogate)
            #expect(error.offendingInput == "k")
        }
    }
}
