// Package psp is the HTTP client for the card processor (PSP).
package psp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"

	"github.com/keele/pos/payments-gateway/internal/config"
	"github.com/pkg/errors"
)

// AuthRequest is what the processor needs to authorise a card-present payment.
type AuthRequest struct {
	OrderID     int64  `json:"order_id"`
	StoreID     string `json:"store_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	Merchant    string `json:"merchant_id"`
}

// AuthResponse is the processor's answer.
type AuthResponse struct {
	Status        string `json:"status"`
	AuthCode      string `json:"auth_code"`
	DeclineReason string `json:"decline_reason,omitempty"`
}

// Client talks to the processor over HTTPS.
type Client struct {
	http *http.Client
	cfg  *config.Config
}

// NewClient builds the HTTP client; the whole call, headers and body, is bounded by PSPTimeout.
func NewClient(cfg *config.Config) (*Client, error) {
	pool, err := loadCAPool(cfg.PSPCABundle)
	if err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	transport := &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: cfg.MaxIdleConns}
	return &Client{http: &http.Client{Timeout: cfg.PSPTimeout, Transport: transport}, cfg: cfg}, nil
}

// Authorize asks the processor to authorise one payment.
func (c *Client) Authorize(ctx context.Context, in AuthRequest) (*AuthResponse, error) {
	req, err := c.newRequest(ctx, "/v1/authorizations", in)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, errors.Wrapf(err, "psp authorize order=%d", in.OrderID)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return nil, errors.Errorf("psp authorize order=%d: processor returned %d", in.OrderID, resp.StatusCode)
	}
	var out AuthResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, errors.Wrap(err, "psp: decoding authorization")
	}
	return &out, nil
}

func (c *Client) newRequest(ctx context.Context, path string, body any) (*http.Request, error) {
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.PSPBaseURL+path, bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.cfg.PSPAPIKey)
	return req, nil
}

// loadCAPool reads the CA bundle the processor's certificate chain is verified against.
func loadCAPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "psp: reading CA bundle")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.Errorf("psp: no certificates in %s", path)
	}
	return pool, nil
}
