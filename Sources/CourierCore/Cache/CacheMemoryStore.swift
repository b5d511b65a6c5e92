/// The in-memory part of an ``HTTPCache``: entries by key, a few `Vary` variants per key,
/// evicted least recently used first once their bytes pass the limit. Not thread-safe; the
/// cache holds it under its lock.
struct CacheMemoryStore: Sendable {
    /// The most variants kept for one URL (responses that `Vary` on a request field).
    static let variantsPerKey = 4

    let capacity: Int
    private(set) var byteCount = 0
    private var slots: [String: Slot] = [:]
    private var clock: UInt64 = 0

    private struct Slot: Sendable {
        var variants: [CachedResponse]
        var lastUse: UInt64
        var byteCount: Int
    }

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var entryCount: Int { slots.values.reduce(0) { $0 + $1.variants.count } }

    /// The variants stored under `key`, most recent first; marks them used.
    mutating func variants(for key: String) -> [CachedResponse] {
        guard var slot = slots[key] else { return [] }
        clock &+= 1
        slot.lastUse = clock
        slots[key] = slot
        return slot.variants
    }

    /// Stores `entry`, replacing the variant that answers the same request fields; evicts
    /// least recently used keys past the capacity. An entry bigger than the whole capacity is
    /// not kept.
    mutating func insert(_ entry: CachedResponse) {
        let cost = entry.byteCount
        guard cost <= capacity else {
            remove(key: entry.key)
            return
        }
        var slot = slots[entry.key] ?? Slot(variants: [], lastUse: 0, byteCount: 0)
        slot.variants.removeAll { $0.varyingFields == entry.varyingFields || $0.variesOnEverything }
        slot.variants.insert(entry, at: 0)
        if slot.variants.count > Self.variantsPerKey {
            slot.variants.removeLast(slot.variants.count - Self.variantsPerKey)
        }
        clock &+= 1
        slot.lastUse = clock
        let newCost = slot.variants.reduce(0) { $0 + $1.byteCount }
        byteCount += newCost - slot.byteCount
        slot.byteCount = newCost
        slots[entry.key] = slot
        evictIfNeeded(keeping: entry.key)
    }

    /// Drops every variant under `key`.
    mutating func remove(key: String) {
        if let slot = slots.removeValue(forKey: key) { byteCount -= slot.byteCount }
    }

    mutating func removeAll() {
        slots.removeAll()
        byteCount = 0
    }

    /// Evicts down to 90% of the capacity in one pass, so a full cache does not sort its keys on
    /// every insert.
    private mutating func evictIfNeeded(keeping key: String) {
        guard byteCount > capacity else { return }
        let target = capacity - capacity / 10
        for (candidate, slot) in slots.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard byteCount > target else { break }
            if candidate == key { continue }
            slots[candidate] = nil
            byteCount -= slot.byteCount
        }
    }
}
