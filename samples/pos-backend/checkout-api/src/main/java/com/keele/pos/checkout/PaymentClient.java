package com.keele.pos.checkout;

import java.math.BigDecimal;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.client.RestTemplateBuilder;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestTemplate;

/**
 * Calls payments-gateway, which talks to the card processor. The gateway answers once
 * the processor has authorised or declined the card.
 */
@Component
public class PaymentClient {

    private static final Logger log = LoggerFactory.getLogger(PaymentClient.class);

    private final RestTemplate restTemplate;
    private final String baseUrl;

    public record PaymentRequest(long orderId, String storeId, BigDecimal amount, String currency) {
    }

    public record PaymentResult(String status, String authCode, String declineReason) {
    }

    public static class PaymentDeclinedException extends RuntimeException {
        public PaymentDeclinedException(long orderId, String reason) {
            super("payment declined for order " + orderId + ": " + reason);
        }
    }

    public PaymentClient(RestTemplateBuilder builder,
                         @Value("${pos.payments.base-url}") String baseUrl,
                         @Value("${pos.payments.connect-timeout}") Duration connectTimeout,
                         @Value("${pos.payments.read-timeout}") Duration readTimeout) {
        this.restTemplate = builder
                .setConnectTimeout(connectTimeout)
                .setReadTimeout(readTimeout)
                .build();
        this.baseUrl = baseUrl;
    }

    public PaymentResult authorize(long orderId, String storeId, BigDecimal amount) {
        PaymentRequest request = new PaymentRequest(orderId, storeId, amount, "EUR");
        long started = System.nanoTime();
        ResponseEntity<PaymentResult> response =
                restTemplate.postForEntity(baseUrl + "/v1/payments", request, PaymentResult.class);
        PaymentResult result = response.getBody();
        log.info("payment order={} status={} took={}ms", orderId, result.status(),
                (System.nanoTime() - started) / 1_000_000);
        if (!"APPROVED".equals(result.status())) {
            throw new PaymentDeclinedException(orderId, result.declineReason());
        }
        return result;
    }
}
