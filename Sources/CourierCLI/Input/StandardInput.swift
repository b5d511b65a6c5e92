import Foundation

/// Reads a request body piped on stdin, as httpie does when stdin is not a terminal.
enum StandardInput {
    /// All of stdin; an empty result means there was no body.
    /// - Throws: ``CLIError`` when stdin cannot be read.
    static func readAll() throws -> Data {
        do {
            return try FileHandle.standardInput.readToEnd() ?? Data()
        } catch {
            throw CLIError.failure("cannot read stdin: \(error.localizedDescription)")
        }
    }
}
