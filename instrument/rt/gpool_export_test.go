package rt

// WorkersMade counts the goroutines made to run controlled goroutines
// (gpool.go), for the tests of package rt_test.
var WorkersMade = &workersMade
