import Courier
import Foundation
import Testing

@testable import CourierCore

/// The file store of unfinished uploads: one 0600 file per fingerprint, in a 0700 directory.
@Suite("Resumable uploads: the file store")
struct ResumableUploadStoreTests {
    static let fingerprint = ResumableUploadFingerprint(
        path: "/data/clip.mp4", size: 42, modificationTime: 1_700_000_000_000_000_000,
        endpoint: "https://uploads.example/files/", protocolName: "tus")

    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-upload-store-\(UUID().uuidString)", isDirectory: true)
        return directory.appendingPathComponent("courier/uploads", isDirectory: true)
    }

    @Test func anEntryIsKeptPrivatelyFoundAgainAndRemoved() async throws {
        let directory = try scratch()
        defer {
            try? FileManager.default.removeItem(at: directory.deletingLastPathComponent().deletingLastPathComponent())
        }
        let store = FileResumableUploadStore(directory: directory)
        #expect(try await store.uploadURL(for: Self.fingerprint) == nil)
        let url = try #require(URL(string: "https://uploads.example/files/abc"))
        try await store.save(url, for: Self.fingerprint)
        #expect(try await store.uploadURL(for: Self.fingerprint) == url)
        #expect(try await FileResumableUploadStore(directory: directory).uploadURL(for: Self.fingerprint) == url)
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(entries == [Self.fingerprint.key + ".json"])
        let file = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(entries[0]).path)
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        var touched = Self.fingerprint
        touched.modificationTime += 1
        #expect(try await store.uploadURL(for: touched) == nil, "a file changed since is another upload")
        try await store.remove(Self.fingerprint)
        try await store.remove(Self.fingerprint)
        #expect(try await store.uploadURL(for: Self.fingerprint) == nil)
    }

    @Test func theStandardStoreFollowsXDGStateHome() {
        let set = FileResumableUploadStore.standard(environment: ["XDG_STATE_HOME": "/state", "HOME": "/home/u"])
        #expect(set.directory.path == "/state/courier/uploads")
        let unset = FileResumableUploadStore.standard(environment: ["HOME": "/home/u"])
        #expect(unset.directory.path == "/home/u/.local/state/courier/uploads")
        let relative = FileResumableUploadStore.standard(environment: ["XDG_STATE_HOME": "state", "HOME": "/home/u"])
        #expect(relative.directory.path == "/home/u/.local/state/courier/uploads")
    }

    @Test func anEntryThatDoesNotParseIsAsGoodAsAbsent() async throws {
        let directory = try scratch()
        defer {
            try? FileManager.default.removeItem(at: directory.deletingLastPathComponent().deletingLastPathComponent())
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: directory.appendingPathComponent(Self.fingerprint.key + ".json"))
        #expect(try await FileResumableUploadStore(directory: directory).uploadURL(for: Self.fingerprint) == nil)
    }
}
