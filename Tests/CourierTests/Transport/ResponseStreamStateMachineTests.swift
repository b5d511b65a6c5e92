import Courier
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient

/// The response delegate's state machine on plain values: waiters are names, promises come from
/// an `EmbeddedEventLoop`, and each event's action is written as a short word, so every row of
/// the table reads as a script of what AsyncHTTPClient and the reader did and what the machine
/// told the delegate to do. No socket, no task, no timing.
@Suite("Transport: the response stream's state machine")
struct ResponseStreamStateMachineTests {
    typealias Machine = ResponseStreamStateMachine<String, String, String>

    struct Failure: Error, Equatable { let name: String }

    /// What happened, in the order the delegate would see it.
    enum Event: CustomStringConvertible {
        case waitForHead(String)
        case head
        /// A part of `n` bytes from AsyncHTTPClient.
        case part(Int)
        /// The reader takes a part, without a waiter or with one.
        case take
        case takeWaiting(String)
        case raise(Int)
        case handOver(String)
        /// A turn of writes ended; `unwritten` parts of one byte each were not written.
        case wrote(keepsFile: Bool, failed: Bool, unwritten: Int)
        case finish
        case fail(keepingHeldParts: Bool)

        var description: String {
            switch self {
            case .waitForHead(let name): "waitForHead(\(name))"
            case .head: "head"
            case .part(let size): "part(\(size))"
            case .take: "take"
            case .takeWaiting(let name): "takeWaiting(\(name))"
            case .raise(let limit): "raise(\(limit))"
            case .handOver(let name): "handOver(\(name))"
            case .wrote(let keeps, let failed, let unwritten): "wrote(\(keeps), \(failed), \(unwritten))"
            case .finish: "finish"
            case .fail(let keeping): "fail(\(keeping))"
            }
        }
    }

    /// Plays `events` on a machine with a read-ahead of `limit` bytes; one word per event.
    static func play(_ events: [Event], limit: Int = 10) -> [String] {
        let loop = EmbeddedEventLoop()
        var machine = Machine(bufferedByteLimit: limit)
        let head = HTTPResponseHead(version: .http1_1, status: .ok)
        func resumes(_ promise: EventLoopPromise<Void>?) -> String {
            guard let promise else { return "" }
            promise.succeed(())
            return " resume"
        }
        return events.map { event in
            switch event {
            case .waitForHead(let name):
                switch machine.waitForHead(name) {
                case nil: return "wait"
                case .success: return "head"
                case .failure(let error): return "failed \((error as? Failure)?.name ?? "\(error)")"
                }
            case .head:
                return "wake \(machine.receivedHead(head) ?? "nobody")"
            case .part(let size):
                switch machine.receivedPart(ByteBuffer(repeating: 1, count: size), makePromise: { loop.makePromise() })
                {
                case .deliver(let name): return "deliver to \(name)"
                case .readOn: return "read on"
                case .pause(let promise):
                    promise.succeed(())
                    return "pause"
                case .write(let name): return "write with \(name)"
                }
            case .take, .takeWaiting:
                let waiter: String? = if case .takeWaiting(let name) = event { name } else { nil }
                switch machine.takePart(waiter: waiter) {
                case .part(let part, let resumed, let isLast):
                    return "\(isLast ? "last " : "")part \(part.readableBytes)\(resumes(resumed))"
                case .end: return "end"
                case .failure(let error): return "failed \((error as? Failure)?.name ?? "\(error)")"
                case .wait: return "wait"
                }
            case .raise(let limit):
                return "raised\(resumes(machine.raiseLimit(to: limit)))"
            case .handOver(let name):
                guard let parts = machine.handOverFile(name) else { return "ended" }
                return "write \(parts.count)"
            case .wrote(let keepsFile, let failed, let unwritten):
                let parts = CircularBuffer((0..<unwritten).map { _ in ByteBuffer(repeating: 2, count: 1) })
                switch machine.wroteParts(keepsFile: keepsFile, failed: failed, unwritten: parts) {
                case .write(let more): return "write \(more.count) more"
                case .done(let name, let resumed):
                    return "\(name.map { "hand back to \($0)" } ?? "keep")\(resumes(resumed))"
                }
            case .finish, .fail:
                let ending =
                    if case .fail(let keeping) = event {
                        machine.end(
                            failure: Failure(name: "reset"), keepingHeldParts: keeping, headless: Failure(name: "-"))
                    } else {
                        machine.end(failure: nil, keepingHeldParts: true, headless: Failure(name: "closed"))
                    }
                guard let ending else { return "already over" }
                let woken = [
                    ending.headWaiter.map { "head \($0)" }, ending.bodyWaiter.map { "body \($0)" },
                    ending.pausedSocket.map { _ in "socket" }, ending.fileWriter.map { "file \($0)" },
                ].compactMap { $0 }
                ending.pausedSocket?.succeed(())
                return woken.isEmpty ? "over" : "over, wake " + woken.joined(separator: ", ")
            }
        }
    }

    struct Script: CustomTestStringConvertible, Sendable {
        let name: String
        let limit: Int
        let steps: [(Event, String)]
        var testDescription: String { name }

        init(_ name: String, limit: Int = 10, _ steps: [(Event, String)]) {
            self.name = name
            self.limit = limit
            self.steps = steps
        }
    }

    static let scripts: [Script] = [
        Script(
            "a reader that waits for the head is woken by it; parts are handed straight to a waiting reader",
            [
                (.waitForHead("h"), "wait"), (.head, "wake h"), (.takeWaiting("r"), "wait"),
                (.part(4), "deliver to r"), (.take, "wait"), (.finish, "over"), (.take, "end"),
            ]),
        Script(
            "a head that came first is there for the reader; parts wait until it takes them",
            [
                (.head, "wake nobody"), (.waitForHead("h"), "head"), (.part(3), "read on"), (.part(3), "read on"),
                (.take, "part 3"), (.take, "part 3"), (.take, "wait"),
            ]),
        Script(
            "held bytes at the limit pause the socket; taking one below it resumes it",
            limit: 8,
            [
                (.head, "wake nobody"), (.part(4), "read on"), (.part(4), "pause"), (.take, "part 4 resume"),
                (.take, "part 4"),
            ]),
        Script(
            "raising the limit resumes a paused socket; a lower limit changes nothing",
            limit: 4,
            [
                (.head, "wake nobody"), (.part(4), "pause"), (.raise(2), "raised"), (.raise(16), "raised resume"),
                (.part(4), "read on"),
            ]),
        Script(
            "the end wakes a waiting reader; parts held before it are still read",
            [
                (.head, "wake nobody"), (.part(2), "read on"), (.finish, "over"), (.take, "last part 2"),
                (.take, "end"),
                (.part(1), "read on"), (.finish, "already over"), (.take, "end"),
            ]),
        Script(
            "after the end, only the last held part says it is the last",
            [
                (.head, "wake nobody"), (.part(2), "read on"), (.part(3), "read on"), (.finish, "over"),
                (.take, "part 2"), (.take, "last part 3"), (.take, "end"),
            ]),
        Script(
            "an end before any head fails the head's waiter with the headless error",
            [(.waitForHead("h"), "wait"), (.finish, "over, wake head h"), (.waitForHead("again"), "failed closed")]),
        Script(
            "a broken connection keeps held parts before its error when asked",
            [
                (.head, "wake nobody"), (.part(2), "read on"), (.fail(keepingHeldParts: true), "over"),
                (.take, "part 2"), (.take, "failed reset"),
            ]),
        Script(
            "Courier's own cancel drops the held parts and wakes the waiters and the socket",
            limit: 2,
            [
                (.head, "wake nobody"), (.part(2), "pause"), (.fail(keepingHeldParts: false), "over, wake socket"),
                (.take, "failed reset"), (.fail(keepingHeldParts: false), "already over"),
            ]),
        Script(
            "a handed-over file gets the held parts, then each part that comes while no write runs",
            [
                (.head, "wake nobody"), (.part(1), "read on"), (.handOver("f"), "write 1"),
                (.part(1), "read on"), (.wrote(keepsFile: true, failed: false, unwritten: 0), "write 1 more"),
                (.wrote(keepsFile: true, failed: false, unwritten: 0), "keep"), (.part(1), "write with f"),
                (.wrote(keepsFile: true, failed: false, unwritten: 0), "keep"),
            ]),
        Script(
            "a stalled write hands the file back with its unwritten parts in front, for the reader",
            [
                (.head, "wake nobody"), (.handOver("f"), "write 0"), (.part(5), "read on"),
                (.wrote(keepsFile: false, failed: false, unwritten: 2), "hand back to f"), (.take, "part 1"),
                (.take, "part 1"), (.take, "part 5"),
            ]),
        Script(
            "a failed write hands the file back and drops what it did not write",
            [
                (.head, "wake nobody"), (.handOver("f"), "write 0"),
                (.wrote(keepsFile: false, failed: true, unwritten: 3), "hand back to f"), (.take, "wait"),
            ]),
        Script(
            "the end during a write leaves the file with its writer, which hands it back after the write",
            [
                (.head, "wake nobody"), (.handOver("f"), "write 0"), (.finish, "over"),
                (.wrote(keepsFile: true, failed: false, unwritten: 1), "hand back to f"), (.take, "last part 1"),
                (.take, "end"),
            ]),
        Script(
            "the end between writes hands the file back at once",
            [
                (.head, "wake nobody"), (.handOver("f"), "write 0"),
                (.wrote(keepsFile: true, failed: false, unwritten: 0), "keep"), (.finish, "over, wake file f"),
            ]),
        Script(
            "a file handed over after the end stays with the reader",
            [
                (.head, "wake nobody"), (.part(1), "read on"), (.finish, "over"), (.handOver("f"), "ended"),
                (.take, "last part 1"),
            ]),
    ]

    @Test(arguments: scripts)
    func eachEventGivesItsAction(_ script: Script) {
        let actions = Self.play(script.steps.map(\.0), limit: script.limit)
        for (index, step) in script.steps.enumerated() {
            #expect(actions[index] == step.1, "step \(index + 1), \(step.0)")
        }
    }

    @Test func onlyHeldPartsOfLargeStorageAreCopied() {
        var large = ByteBufferAllocator().buffer(capacity: 512 << 10)
        large.writeRepeatingByte(7, count: 16 << 10)
        let copied = StreamingResponseDelegate.Machine.compacted(large)
        #expect(copied.storageCapacity < large.storageCapacity)
        #expect(copied == large)
    }
}
