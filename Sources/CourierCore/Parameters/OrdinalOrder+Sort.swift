extension OrdinalOrder {
    /// Sorts one dictionary's slots in place, without allocating: insertion sort up to 16
    /// slots (nested dictionaries are usually that small), otherwise quicksort on the packed
    /// prefixes with a median-of-three pivot, falling back to heapsort past a depth limit so
    /// that no input makes it quadratic. Keys in a dictionary are unique, so an unstable sort
    /// gives the one possible order.
    static func sort(_ slots: UnsafeMutableBufferPointer<Slot>, keysIn dictionary: [String: ParameterValue]) {
        guard slots.count > 1 else { return }
        var depthLimit = 2
        var size = slots.count
        while size > 1 {
            depthLimit += 2
            size /= 2
        }
        quicksort(slots, low: 0, high: slots.count, depthLimit: depthLimit, dictionary)
    }

    /// Sorts `slots[low..<high]`, recursing into the smaller side only (stack depth ≤ log₂ n).
    private static func quicksort(
        _ slots: UnsafeMutableBufferPointer<Slot>, low: Int, high: Int, depthLimit: Int,
        _ dictionary: [String: ParameterValue]
    ) {
        var low = low
        var high = high
        var depthLimit = depthLimit
        while high - low > 16 {
            guard depthLimit > 0 else {
                heapsort(slots, low: low, high: high, dictionary)
                return
            }
            depthLimit -= 1
            // Median of three, so sorted and reverse-sorted input split evenly.
            let middle = low + (high - low) / 2
            if slots[middle].precedes(slots[low], in: dictionary) { slots.swapAt(middle, low) }
            if slots[high - 1].precedes(slots[middle], in: dictionary) {
                slots.swapAt(high - 1, middle)
                if slots[middle].precedes(slots[low], in: dictionary) { slots.swapAt(middle, low) }
            }
            let pivot = slots[middle]
            // Hoare partition: afterwards every slot in low...split precedes every slot after it.
            var left = low - 1
            var right = high
            var split = low
            while true {
                repeat { left += 1 } while slots[left].precedes(pivot, in: dictionary)
                repeat { right -= 1 } while pivot.precedes(slots[right], in: dictionary)
                if left >= right {
                    split = right
                    break
                }
                slots.swapAt(left, right)
            }
            if split + 1 - low < high - (split + 1) {
                quicksort(slots, low: low, high: split + 1, depthLimit: depthLimit, dictionary)
                low = split + 1
            } else {
                quicksort(slots, low: split + 1, high: high, depthLimit: depthLimit, dictionary)
                high = split + 1
            }
        }
        insertionSort(slots, low: low, high: high, dictionary)
    }

    private static func insertionSort(
        _ slots: UnsafeMutableBufferPointer<Slot>, low: Int, high: Int, _ dictionary: [String: ParameterValue]
    ) {
        guard high - low > 1 else { return }
        for sorted in (low + 1)..<high {
            let slot = slots[sorted]
            var position = sorted
            while position > low, slot.precedes(slots[position - 1], in: dictionary) {
                slots[position] = slots[position - 1]
                position -= 1
            }
            slots[position] = slot
        }
    }

    private static func heapsort(
        _ slots: UnsafeMutableBufferPointer<Slot>, low: Int, high: Int, _ dictionary: [String: ParameterValue]
    ) {
        let count = high - low
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while true {
                var child = 2 * root + 1
                guard child < end else { return }
                if child + 1 < end, slots[low + child].precedes(slots[low + child + 1], in: dictionary) { child += 1 }
                guard slots[low + root].precedes(slots[low + child], in: dictionary) else { return }
                slots.swapAt(low + root, low + child)
                root = child
            }
        }
        var start = count / 2
        while start > 0 {
            start -= 1
            siftDown(start, count)
        }
        var end = count
        while end > 1 {
            end -= 1
            slots.swapAt(low, low + end)
            siftDown(0, end)
        }
    }
}
