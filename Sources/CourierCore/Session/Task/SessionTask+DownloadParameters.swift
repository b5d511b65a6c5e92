import Foundation

extension SessionTask {
    /// What a download task does with its body: where it goes, how it continues earlier bytes,
    /// and where it is written while it arrives.
    struct DownloadParameters: Sendable {
        var options: DownloadOptions
        var destination: DownloadDestination
        var resumeData: ResumeData?
        /// Set for a download that streams into a resumable partial file (``DownloadOptions/resumesPartialFile``).
        var partial: PartialDownload?
        /// The destination's directory when it is known up front (finishing is then a rename,
        /// never a copy across file systems); nil for the session's temporary directory.
        var stagingDirectory: URL?
    }
}
