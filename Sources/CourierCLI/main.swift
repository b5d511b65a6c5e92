import Foundation

// Before anything opens a descriptor: a closed stdin, stdout or stderr is held, so that no file
// or event-loop descriptor takes its number (StandardDescriptors.swift).
_ = StandardDescriptors.closedAtStart
let status = await CourierCommand.runMain()
exit(status)
