import Foundation

let status = await CourierCommand.runMain()
exit(status)
