import Testing

@testable import PeerConnectivityBench

/// Which runners a reflector served at the same time, as each runner's report names them.
@Suite("The reflector's book of runners served together")
struct CoRunnerBookTests {
    @Test("each runner names those served while it was, in the order they met; one that left keeps its list")
    func overlap() {
        var book = CoRunnerBook()
        book.arrived(1, label: "a")
        book.arrived(2, label: "b")
        #expect(book.others(of: 1).names == ["b"] && book.others(of: 2).names == ["a"])
        book.left(1)
        book.arrived(3, label: "c")
        // a had left: c never met it; b met both.
        #expect(book.others(of: 3).names == ["b"] && book.others(of: 3).count == 1)
        #expect(book.others(of: 2).names == ["a", "c"] && book.others(of: 2).count == 2)
        #expect(book.others(of: 1).names.isEmpty && book.others(of: 1).count == 0, "not served: nothing to say")
        book.left(2)
        book.left(3)
        book.arrived(4, label: "d")
        #expect(book.others(of: 4).count == 0, "alone")
    }

    @Test("past the limit the names stop and the count goes on")
    func limit() {
        var book = CoRunnerBook()
        book.arrived(0, label: "first")
        for id in 1...(CoRunnerBook.limit + 5) {
            book.arrived(id, label: "r\(id)")
            book.left(id)
        }
        let (names, count) = book.others(of: 0)
        #expect(names.count == CoRunnerBook.limit && count == CoRunnerBook.limit + 5)
        #expect(names.first == "r1" && names.last == "r\(CoRunnerBook.limit)")
    }
}
