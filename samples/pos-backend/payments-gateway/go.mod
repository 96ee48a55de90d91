module github.com/keele/pos/payments-gateway

go 1.22

require github.com/pkg/errors v0.9.1
