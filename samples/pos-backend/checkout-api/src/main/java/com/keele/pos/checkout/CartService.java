package com.keele.pos.checkout;

import com.keele.pos.checkout.model.Cart;
import com.keele.pos.checkout.model.CartLine;
import com.keele.pos.checkout.model.CartNotFoundException;
import com.keele.pos.checkout.model.TaxQuote;
import com.keele.pos.checkout.model.TaxQuoteRequest;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestTemplate;

/**
 * Cart pricing for the register checkout flow: loads the cart the register built up
 * (kept in Redis while the cashier scans), applies the member discount and asks the
 * tax service for a quote.
 */
@Service
public class CartService {

    private static final Logger log = LoggerFactory.getLogger(CartService.class);
    private static final Duration CART_TTL = Duration.ofHours(4);

    private final RedisTemplate<String, Cart> cartCache;
    private final RestTemplate taxRestTemplate;
    private final String taxBaseUrl;
    private final String taxApiToken;

    public CartService(RedisTemplate<String, Cart> cartCache,
                       RestTemplate taxRestTemplate,
                       @Value("${pos.tax.base-url}") String taxBaseUrl,
                       @Value("${pos.tax.api-token}") String taxApiToken) {
        this.cartCache = cartCache;
        this.taxRestTemplate = taxRestTemplate;
        this.taxBaseUrl = taxBaseUrl;
        this.taxApiToken = taxApiToken;
    }

    public Cart loadCart(String cartId) {
        Cart cart = cartCache.opsForValue().get(cacheKey(cartId));
        if (cart == null) {
            throw new CartNotFoundException(cartId);
        }
        return cart;
    }

    public void saveCart(Cart cart) {
        cartCache.opsForValue().set(cacheKey(cart.getId()), cart, CART_TTL);
    }

    public BigDecimal subtotal(Cart cart) {
        BigDecimal sum = BigDecimal.ZERO;
        for (CartLine line : cart.getLines()) {
            sum = sum.add(line.unitPrice().multiply(BigDecimal.valueOf(line.quantity())));
        }
        return sum.setScale(2, RoundingMode.HALF_UP);
    }

    public TaxQuote quoteTax(Cart cart, BigDecimal discountedTotal) {
        HttpHeaders headers = new HttpHeaders();
        headers.setBearerAuth(taxApiToken);
        TaxQuoteRequest request = new TaxQuoteRequest(cart.getStoreId(), cart.getLines(), discountedTotal);
        TaxQuote quote = taxRestTemplate.postForObject(
                taxBaseUrl + "/v2/quote", new HttpEntity<>(request, headers), TaxQuote.class);
        log.debug("tax quote store={} total={} tax={}", cart.getStoreId(), discountedTotal, quote.amount());
        return quote;
    }

    /**
     * Member discount: the customer's loyalty tier gives a rate off the subtotal.
     * Promotions are applied by the register before the cart reaches us.
     * Rates come from the loyalty tier table (BASIC 0%, SILVER 2%, GOLD 5%,
     * PLATINUM 10%) and are rounded half-up to the cent.
     */
    public BigDecimal applyDiscount(Cart cart) {
        BigDecimal subtotal = subtotal(cart);
        if (subtotal.signum() == 0) {
            return subtotal;
        }
        BigDecimal rate = cart.getCustomer().getLoyaltyTier().discountRate();
        BigDecimal discount = subtotal.multiply(rate).setScale(2, RoundingMode.HALF_UP);
        log.debug("discount cart={} rate={} discount={}", cart.getId(), rate, discount);
        return subtotal.subtract(discount);
    }

    private static String cacheKey(String cartId) {
        return "cart:" + cartId;
    }
}
