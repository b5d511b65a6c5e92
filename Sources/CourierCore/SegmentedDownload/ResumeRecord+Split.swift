import Foundation

/// A split download's resume record: the plain record (URL, validators) with the complete
/// length and the byte ranges still missing, so that each segment continues where it stopped.
extension ResumeRecord {
    /// Makes this the record of a split download of `length` bytes that lacks `missing`.
    mutating func split(length: Int64, missing: [Range<Int64>]) {
        format = Self.splitFormat
        self.length = length
        self.missing = missing
    }

    /// The representation and missing ranges of a split download's record; nil for a plain
    /// record, or one whose validator cannot go in `If-Range` or whose ranges do not fit its length.
    var splitDownload: (RangedRepresentation, [Range<Int64>])? {
        guard let length, length > 0, let missing,
            missing.allSatisfy({ $0.lowerBound >= 0 && $0.upperBound <= length })
        else { return nil }
        let strongTag = entityTag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard strongTag != nil || lastModified != nil else { return nil }
        return (RangedRepresentation(length: length, entityTag: strongTag, lastModified: lastModified), missing)
    }
}
