module github.com/storagebench/storagebench

go 1.26.8
