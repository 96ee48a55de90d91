// Command gateway is the payments gateway: checkout-api posts card payments here and
// the gateway forwards them to the card processor.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/keele/pos/payments-gateway/internal/config"
	"github.com/keele/pos/payments-gateway/internal/psp"
)

type server struct {
	psp      *psp.Client
	merchant string
	log      *slog.Logger
}

// LevelFatal is logged right before the process exits.
const LevelFatal = slog.Level(12)

func newLogger() *slog.Logger {
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.LevelKey && a.Value.Any().(slog.Level) == LevelFatal {
			a.Value = slog.StringValue("FATAL")
		}
		return a
	}}
	return slog.New(slog.NewJSONHandler(os.Stdout, opts)).With("service", "payments-gateway")
}

func fatal(logger *slog.Logger, msg string, err error) {
	logger.Log(context.Background(), LevelFatal, msg+": "+err.Error(), "stack", fmt.Sprintf("%+v", err))
	os.Exit(1)
}

func main() {
	logger := newLogger()
	cfg, err := config.Load()
	if err != nil {
		fatal(logger, "invalid configuration", err)
	}
	client, err := psp.NewClient(cfg)
	if err != nil {
		fatal(logger, "cannot build PSP client", err)
	}
	s := &server{psp: client, merchant: cfg.MerchantID, log: logger}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payments", s.handlePayment)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	logger.Info("listening", "addr", cfg.ListenAddr, "psp", cfg.PSPBaseURL, "psp_timeout", cfg.PSPTimeout.String())
	if err := http.ListenAndServe(cfg.ListenAddr, mux); err != nil {
		logger.Error("server stopped", "error", err.Error())
		os.Exit(1)
	}
}

type paymentRequest struct {
	OrderID  int64   `json:"orderId"`
	StoreID  string  `json:"storeId"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

func (s *server) handlePayment(w http.ResponseWriter, r *http.Request) {
	var in paymentRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	res, err := s.psp.Authorize(r.Context(), psp.AuthRequest{
		OrderID:     in.OrderID,
		StoreID:     in.StoreID,
		AmountMinor: int64(in.Amount*100 + 0.5),
		Currency:    in.Currency,
		Merchant:    s.merchant,
	})
	if err != nil {
		s.log.Error(err.Error(), "order_id", in.OrderID, "store_id", in.StoreID,
			"stack", fmt.Sprintf("%+v", err))
		http.Error(w, `{"status":"ERROR","declineReason":"processor_unavailable"}`, http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"status": res.Status, "authCode": res.AuthCode, "declineReason": res.DeclineReason,
	})
}
