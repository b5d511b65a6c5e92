import Courier
import Testing

@testable import CourierCore

@Suite("ContentDisposition (RFC 6266, RFC 8187)")
struct ContentDispositionTests {
    @Test func parsesTypeAndQuotedFileName() throws {
        let disposition = try #require(ContentDisposition(#"Attachment; FileName="report 2024.pdf""#))
        #expect(disposition.type == "attachment")
        #expect(disposition.isAttachment)
        #expect(disposition.parameters == [.init(name: "filename", value: "report 2024.pdf")])
        #expect(disposition.fileName == "report 2024.pdf")
        #expect(disposition.safeFileName == "report 2024.pdf")
    }

    @Test func parsesATokenFileNameAndInline() throws {
        let disposition = try #require(ContentDisposition("inline; filename=a.txt"))
        #expect(!disposition.isAttachment)
        #expect(disposition.fileName == "a.txt")
    }

    @Test func extendedFileNameWinsWhateverTheOrder() throws {
        let after = try #require(
            ContentDisposition(#"attachment; filename="EURO rates"; filename*=utf-8''%e2%82%ac%20rates"#))
        #expect(after.fileName == "€ rates")
        let before = try #require(
            ContentDisposition(#"attachment; filename*=UTF-8''%E2%82%AC%20rates; filename="EURO rates""#))
        #expect(before.fileName == "€ rates")
        #expect(before.parameter("FILENAME") == "EURO rates")
        #expect(before.parameter("filename*") == "€ rates")
    }

    @Test func decodesLanguageTaggedAndLatin1ExtendedValues() throws {
        #expect(
            try #require(ContentDisposition("attachment; filename*=UTF-8'en-us'na%C3%AFve.txt")).fileName
                == "naïve.txt")
        #expect(
            try #require(ContentDisposition("attachment; filename*=iso-8859-1''%A3%20rates")).fileName
                == "£ rates")
    }

    @Test(arguments: [
        "attachment; filename*=UTF-8''%FF.txt",  // not UTF-8
        "attachment; filename*=UTF-8''%E2%82.txt",  // truncated sequence
        "attachment; filename*=UTF-8''%4",  // truncated escape
        "attachment; filename*=UTF-8''%zz",  // not hex
        "attachment; filename*=UTF-8'a.txt",  // one apostrophe
        "attachment; filename*=koi8-r''a.txt",  // unsupported charset
        "attachment; filename*=\"UTF-8''a.txt\"",  // ext-values are never quoted
        "attachment; filename*=UTF-8'e_n'a.txt",  // bad language tag
    ])
    func anUndecodableExtendedValueFallsBackToFileName(_ extended: String) throws {
        let disposition = try #require(ContentDisposition(extended + #"; filename="fallback.txt""#))
        #expect(disposition.fileName == "fallback.txt")
        #expect(disposition.parameter("filename*") == nil)
    }

    @Test func readsFormDataNames() throws {
        let disposition = try #require(ContentDisposition(#"form-data; name="field \"1\""; filename="x""#))
        #expect(disposition.type == "form-data")
        #expect(disposition.name == #"field "1""#)
    }

    @Test(arguments: [
        "", ";", "attachment; filename", "attachment; filename=", "attachment; filename=a b",
        "attachment; filename=\"a", "attachment filename=a", "attachment; filename=a; filename=b",
        "attachment; FILENAME=a; filename=b", "attachment; filename=\"\u{0}\"", "attachment; filename=\"a\r\nb\"",
        "\"attachment\"", "attachment; filename=\"a\"\"b\"",
    ])
    func rejectsInvalidValues(_ value: String) {
        #expect(ContentDisposition(value) == nil, "\(value.debugDescription)")
    }

    @Test func hostileServerFileNamesBecomeSafeBaseNames() throws {
        let cases: [(String, String?)] = [
            (#"attachment; filename="../../etc/passwd""#, "passwd"),
            (#"attachment; filename="/etc/passwd""#, "passwd"),
            (#"attachment; filename="C:\\Windows\\system32\\evil.dll""#, "evil.dll"),
            (#"attachment; filename="..""#, nil),
            (#"attachment; filename=".""#, nil),
            (#"attachment; filename="a/..""#, "a"),
            (#"attachment; filename=".bashrc""#, "bashrc"),
            (#"attachment; filename="x...tar..gz""#, "x.tar.gz"),
            (#"attachment; filename="  spaced.txt. ""#, "spaced.txt"),
            ("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fshadow", "shadow"),
            ("attachment; filename*=UTF-8''a%00b%0D%0Ac%7F%C2%85d.txt", "abcd.txt"),
            ("attachment; filename*=UTF-8''evil%E2%80%AEtxt.exe", "eviltxt.exe"),
            ("attachment; filename*=UTF-8''%2F", nil),
        ]
        for (header, expected) in cases {
            let disposition = try #require(ContentDisposition(header), "\(header)")
            #expect(disposition.safeFileName == expected, "\(header)")
        }
    }

    @Test func safeFileNameCapsLengthOnACharacterBoundaryKeepingTheExtension() throws {
        let long = String(repeating: "é", count: 300) + ".pdf"  // 604 bytes
        let safe = try #require(ContentDisposition.safeFileName(from: long))
        // 251 bytes are left for the stem; 125 two-byte "é" fill 250 of them.
        #expect(safe == String(repeating: "é", count: 125) + ".pdf")
        let noExtension = try #require(
            ContentDisposition.safeFileName(from: String(repeating: "a", count: 40), maxUTF8Length: 20))
        #expect(noExtension == String(repeating: "a", count: 20))
        let tiny = try #require(ContentDisposition.safeFileName(from: "abcdefghijklmnopqrstuvwxyz", maxUTF8Length: 3))
        #expect(tiny == "abcdefghijklmnop")  // the floor is 16 bytes
    }

    @Test func safeFileNameLeavesOrdinaryNamesAlone() {
        for name in ["a.txt", "résumé (final).pdf", "日本語.txt", "a b", "x.tar.gz"] {
            #expect(ContentDisposition.safeFileName(from: name) == name)
        }
    }
}
