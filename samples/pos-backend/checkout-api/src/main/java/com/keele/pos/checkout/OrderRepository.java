package com.keele.pos.checkout;

import com.keele.pos.checkout.model.Order;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/**
 * Orders live in the orders database (PostgreSQL 15). Schema changes ship as Flyway
 * migrations under src/main/resources/db/migration.
 */
@Repository
public class OrderRepository {

    private static final String INSERT_ORDER =
            "INSERT INTO orders (store_id, register_id, idempotency_key, amount, gift_card_id, status, created_at) "
            + "VALUES (?, ?, ?, ?, ?, 'PENDING', now()) RETURNING id";

    private static final String MARK_PAID =
            "UPDATE orders SET status = 'PAID', auth_code = ?, paid_at = now() WHERE id = ?";

    private static final String FIND_BY_ID =
            "SELECT id, store_id, register_id, amount, status, auth_code, created_at FROM orders WHERE id = ?";

    private static final RowMapper<Order> ORDER_ROW = (rs, n) -> new Order(
            rs.getLong("id"),
            rs.getString("store_id"),
            rs.getString("register_id"),
            rs.getBigDecimal("amount"),
            rs.getString("status"),
            rs.getString("auth_code"),
            rs.getTimestamp("created_at").toInstant());

    private final JdbcTemplate jdbc;

    public OrderRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Creates the order in PENDING state; the register sends one idempotency key per sale. */
    public long insertOrder(String storeId, String registerId, String idempotencyKey,
                            BigDecimal amount, String giftCardId) {
        Long id = jdbc.queryForObject(INSERT_ORDER, Long.class,
                storeId, registerId, idempotencyKey, amount, giftCardId);
        return id;
    }

    public void markPaid(long orderId, String authCode) {
        int updated = jdbc.update(MARK_PAID, authCode, orderId);
        if (updated != 1) {
            throw new IllegalStateException("order " + orderId + " not found while marking paid");
        }
    }

    public Optional<Order> findById(long orderId) {
        List<Order> rows = jdbc.query(FIND_BY_ID, ORDER_ROW, orderId);
        return rows.stream().findFirst();
    }
}
