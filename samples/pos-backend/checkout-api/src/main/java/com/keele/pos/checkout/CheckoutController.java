package com.keele.pos.checkout;

import com.keele.pos.checkout.PaymentClient.PaymentResult;
import com.keele.pos.checkout.model.Cart;
import com.keele.pos.checkout.model.Order;
import com.keele.pos.checkout.model.TaxQuote;
import java.math.BigDecimal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Register-facing checkout endpoint. A register calls POST /api/v1/checkout once the
 * cashier presses "Pay"; the call returns when the card has been authorised.
 */
@RestController
@RequestMapping("/api/v1")
public class CheckoutController {

    private static final Logger log = LoggerFactory.getLogger(CheckoutController.class);

    private final CartService cartService;
    private final PaymentClient paymentClient;
    private final OrderRepository orders;
    private final TransactionTemplate tx;

    public CheckoutController(CartService cartService, PaymentClient paymentClient,
                              OrderRepository orders, TransactionTemplate tx) {
        this.cartService = cartService;
        this.paymentClient = paymentClient;
        this.orders = orders;
        this.tx = tx;
    }

    public record CheckoutRequest(String cartId, String storeId, String registerId,
                                  String idempotencyKey, BigDecimal tipAmount, String giftCardId) {
    }

    public record OrderReceipt(long orderId, BigDecimal amount, String authCode) {
    }

    @PostMapping("/checkout")
    public ResponseEntity<OrderReceipt> checkout(@RequestBody CheckoutRequest req) {
        Cart cart = cartService.loadCart(req.cartId());
        BigDecimal total = cartService.applyDiscount(cart);
        TaxQuote tax = cartService.quoteTax(cart, total);
        BigDecimal amount = total.add(tax.amount())
                .add(req.tipAmount() == null ? BigDecimal.ZERO : req.tipAmount());

        // One transaction for the whole checkout, so a declined card leaves no order behind.
        OrderReceipt receipt = tx.execute(status -> {
            long orderId = orders.insertOrder(req.storeId(), req.registerId(), req.idempotencyKey(),
                    amount, req.giftCardId());
            PaymentResult payment = paymentClient.authorize(orderId, req.storeId(), amount);
            orders.markPaid(orderId, payment.authCode());
            return new OrderReceipt(orderId, amount, payment.authCode());
        });

        log.info("checkout ok order={} store={} register={} amount={}",
                receipt.orderId(), req.storeId(), req.registerId(), amount);
        return ResponseEntity.status(HttpStatus.CREATED).body(receipt);
    }

    @GetMapping("/orders/{id}")
    public ResponseEntity<Order> order(@PathVariable long id) {
        return orders.findById(id)
                .map(ResponseEntity::ok)
                .orElse(ResponseEntity.notFound().build());
    }
}
