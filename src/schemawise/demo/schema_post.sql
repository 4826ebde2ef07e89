CREATE MATERIALIZED VIEW shop.mv_daily_revenue_old AS
SELECT date_trunc('day', ordered_at)::date AS day, sum(amt) AS amount
FROM shop.orders GROUP BY 1;
COMMENT ON MATERIALIZED VIEW shop.mv_daily_revenue_old IS 'DEPRECATED: counts cancelled and refunded orders. Use orders with status in (A, S) minus refunds.';
ANALYZE;
