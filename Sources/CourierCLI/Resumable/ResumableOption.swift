import ArgumentParser
import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--resumable` and `--resumable=tus|ietf`: ArgumentParser has no option whose value may be
/// left out, so `--resumable=VALUE` is rewritten into the flag and the hidden
/// `--resumable-protocol VALUE` before parsing.
enum ResumableOption {
    static let flag = "--resumable"
    static let protocolOption = "--resumable-protocol"

    /// The command line with `--resumable=VALUE` split into `--resumable --resumable-protocol VALUE`.
    static func rewriting(_ arguments: [String]) -> [String] {
        // After `--` every argument is positional, and stays as typed.
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var result: [String] = []
        for argument in arguments[..<end] {
            if argument.hasPrefix(flag + "=") {
                result += [flag, protocolOption, String(argument.dropFirst(flag.count + 1))]
            } else {
                result.append(argument)
            }
        }
        return result + arguments[end...]
    }

    /// The file to upload: `@FILE`, or stdin when it is a regular file (`< FILE`), by its real
    /// path so that the same command in a later process finds the same upload.
    /// - Throws: ``CLIError`` when the body is no file (data items, a pipe: they cannot be read
    ///   again from an offset in a later run).
    static func file(of plan: RequestPlan) throws -> URL {
        switch plan.rawBody {
        case .file(let path)?: return URL(fileURLWithPath: path).standardizedFileURL
        case .stdin?:
            var info = stat()
            guard fstat(0, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { break }
            #if os(Linux)
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let count = readlink("/proc/self/fd/0", &buffer, buffer.count - 1)
                if count > 0 {
                    let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    return URL(fileURLWithPath: path)
                }
            #endif
            return URL(fileURLWithPath: "/dev/fd/0")
        default: break
        }
        throw CLIError.failure(
            "--resumable uploads a file: give it as @FILE or on stdin with < FILE (a pipe or data items cannot be resumed)"
        )
    }
}

/// The value of `--resumable=…`: the library's ``ResumableUploadProtocol`` by name.
enum ResumableProtocolOption: String, ExpressibleByArgument, Sendable {
    case tus
    case ietf

    var uploadProtocol: ResumableUploadProtocol {
        switch self {
        case .tus: return .tus
        case .ietf: return .ietf
        }
    }
}

/// `--chunk-size`: bytes, or with a K, M or G suffix (powers of 1024).
struct ChunkSizeOption: ExpressibleByArgument, Sendable {
    var bytes: Int64

    init?(argument: String) {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(argument.uppercased())
        if digits.hasSuffix("IB") {
            digits = digits.dropLast(2)
        } else if digits.hasSuffix("B") {
            digits = digits.dropLast()
        }
        var scale: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard let count = Int64(digits), count > 0 else { return nil }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        self.bytes = bytes
    }
}
