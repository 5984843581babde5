/* The labels of the prepared statements (sql/as_db*.c), as named constants:
 * a statement is defined and run by its L_ name, so a misspelt one does not
 * compile, and prepare_all (as_db.c) checks, when a connection prepares them,
 * that each label of AS_DB_LABELS has exactly one statement (start-up fails
 * otherwise, naming the label). Grouped by the file that defines them. */
#ifndef AS_DB_LABELS_H
#define AS_DB_LABELS_H

/* sql/as_db.c */
#define L_AS_MERCHANTS "as_merchants"
#define L_AS_DEVICES "as_devices"
#define L_AS_DEVICE_BY_SLUG "as_device_by_slug"
#define L_AS_META_SET "as_meta_set"
#define L_AS_KEY_BY_HASH "as_key_by_hash"
#define L_AS_MANDATE_CURRENT "as_mandate_current"
#define L_AS_MANDATE_CURRENT_LOCK "as_mandate_current_lock"
#define L_AS_MANDATE_GET "as_mandate_get"
#define L_AS_MANDATE_LOCK "as_mandate_lock"
#define L_AS_MANDATE_SPENT "as_mandate_spent"
#define L_AS_SPENT_STALE "as_spent_stale"
#define L_AS_SPENT_CLEAR "as_spent_clear"
#define L_AS_SPENT_FILL "as_spent_fill"
#define L_AS_QUOTE_INSERT "as_quote_insert"
#define L_AS_QUOTE_GET "as_quote_get"
#define L_AS_ORDER_INSERT "as_order_insert"
#define L_AS_ORDER_GET "as_order_get"
#define L_AS_ORDER_EVENTS "as_order_events"
#define L_AS_ORDER_MOVE "as_order_move"
#define L_AS_EVENT_ADD "as_event_add"
#define L_AS_ORDERS_EXPIRED "as_orders_expired"
#define L_AS_ORDERS_EXPIRED_ANY "as_orders_expired_any"
#define L_AS_STOCK_TAKE "as_stock_take"
#define L_AS_STOCK_GIVE "as_stock_give"
#define L_AS_OFFER_WITHDRAWN "as_offer_withdrawn"
#define L_AS_CONF_INSERT "as_conf_insert"
#define L_AS_CONF_GET "as_conf_get"
#define L_AS_CONF_DECIDE "as_conf_decide"
#define L_AS_IDEM_CLAIM "as_idem_claim"
#define L_AS_IDEM_GET "as_idem_get"
#define L_AS_IDEM_TAKEOVER "as_idem_takeover"
#define L_AS_IDEM_FORGET "as_idem_forget"
#define L_AS_IDEM_FINISH "as_idem_finish"
#define L_AS_RETURN_INSERT "as_return_insert"
#define L_AS_RETURN_GET "as_return_get"
#define L_AS_RETURN_BY_ORDER "as_return_by_order"
#define L_AS_QUESTION_INSERT "as_question_insert"
#define L_AS_PASSKEY_INSERT "as_passkey_insert"
#define L_AS_PASSKEYS_OF "as_passkeys_of"
#define L_AS_PASSKEY_GET "as_passkey_get"
#define L_AS_PASSKEY_COUNT "as_passkey_count"
#define L_AS_ENROLMENT_INSERT "as_enrolment_insert"
#define L_AS_ENROLMENT_GET "as_enrolment_get"
#define L_AS_ENROLMENT_USE "as_enrolment_use"
#define L_AS_CHALLENGE_INSERT "as_challenge_insert"
#define L_AS_CHALLENGE_USE "as_challenge_use"
#define L_AS_CHALLENGES_PRUNE "as_challenges_prune"
#define L_AS_CHALLENGE_LIVE "as_challenge_live"
#define L_AS_CHALLENGES_DUE "as_challenges_due"
#define L_AS_KEY_INSERT "as_key_insert"
#define L_AS_KEY_REVOKE "as_key_revoke"
#define L_AS_KEY_LIST "as_key_list"
#define L_AS_KEY_GET "as_key_get"
#define L_AS_MANDATE_INSERT "as_mandate_insert"
#define L_AS_MANDATE_REVOKE "as_mandate_revoke"
#define L_AS_MANDATE_LIST "as_mandate_list"
/* sql/as_db_feed.c */
#define L_FEED_MERCHANTS "feed_merchants"
#define L_FEED_DEVICES "feed_devices"
#define L_FEED_PRODUCTS "feed_products"
#define L_FEED_OFFERS "feed_offers"
#define L_FEED_LOCK "feed_lock"
#define L_FEED_MAX_DEVICE "feed_max_device"
#define L_FEED_MAX_PRODUCT "feed_max_product"
#define L_FEED_MERCHANT "feed_merchant"
#define L_FEED_DEVICE "feed_device"
#define L_FEED_PRODUCTS_PUT "feed_products_put"
#define L_FEED_OFFERS_PUT "feed_offers_put"
#define L_FEED_COMPAT_PUT "feed_compat_put"
#define L_FEED_SPECS_IN "feed_specs_in"
#define L_FEED_SPECS_CLEAR_IN "feed_specs_clear_in"
#define L_FEED_SPECS_PUT "feed_specs_put"
#define L_FEED_STATE_IN "feed_state_in"
#define L_FEED_MEASURED_PUT "feed_measured_put"
#define L_FEED_SPEC_MEASURED_PUT "feed_spec_measured_put"
#define L_FEED_VERIFICATION_PUT "feed_verification_put"
#define L_FEED_STOCK_SINCE "feed_stock_since"
#define L_FEED_WITHDRAW_MERCHANT "feed_withdraw_merchant"
#define L_FEED_WITHDRAW_DEVICE "feed_withdraw_device"
#define L_FEED_WITHDRAW_PRODUCT "feed_withdraw_product"
#define L_FEED_WITHDRAW_OFFER "feed_withdraw_offer"
#define L_FEED_WITHDRAW_OFFERS_OF "feed_withdraw_offers_of"
#define L_FEED_WITHDRAW_OFFERS_OF_MERCHANT "feed_withdraw_offers_of_merchant"
#define L_FEED_OFFERS_OF_MERCHANT "feed_offers_of_merchant"
#define L_FEED_WITHDRAW_COMPAT "feed_withdraw_compat"
#define L_FEED_X_MERCHANTS "feed_x_merchants"
#define L_FEED_X_DEVICES "feed_x_devices"
#define L_FEED_X_PRODUCTS "feed_x_products"
#define L_FEED_X_SPECS "feed_x_specs"
#define L_FEED_X_OFFERS "feed_x_offers"
#define L_FEED_X_COMPAT "feed_x_compat"
/* sql/as_db_ops.c */
#define L_AS_OPS_ORDERS "as_ops_orders"
#define L_AS_OPS_RETURNS "as_ops_returns"
#define L_AS_OPS_USERS "as_ops_users"
#define L_AS_OPS_OFFER_LOCK "as_ops_offer_lock"
#define L_AS_OPS_OFFER_SET "as_ops_offer_set"
/* sql/as_db_search.c */
#define L_AS_SEARCH_DEV "as_search_dev"
#define L_AS_COMPAT_COUNT "as_compat_count"
#define L_AS_COMPAT_PAGE "as_compat_page"
#define L_AS_COMPAT_LEFT_OUT "as_compat_left_out"
#define L_AS_RANK_SIZES "as_rank_sizes"
#define L_AS_RANK_MAX_ID "as_rank_max_id"
#define L_AS_RANK_CLEAR "as_rank_clear"
#define L_AS_RANK_PRODUCT "as_rank_product"
#define L_AS_RANK_SEED "as_rank_seed"
#define L_AS_RANK_OFFERS "as_rank_offers"
#define L_AS_RANK_SET "as_rank_set"
#define L_AS_RANK_SET_MANY "as_rank_set_many"
#define L_AS_VERSION_GET "as_version_get"
#define L_AS_LIVE_CHANGES "as_live_changes"
#define L_AS_LIVE_ASKED "as_live_asked"
#define L_AS_CATALOGUE_SET "as_catalogue_set"
#define L_AS_VERSION_BUMP "as_version_bump"
#define L_AS_RANK_CHANGES "as_rank_changes"
#define L_AS_INDEX_OFFERS "as_index_offers"
#define L_AS_INDEX_COMPAT "as_index_compat"
#define L_AS_OFFERS_STOCK "as_offers_stock"
/* sql/as_db_view.c */
#define L_AS_PRODUCT_VIEW "as_product_view"
#define L_AS_PRODUCT_VIEW_DEVICE "as_product_view_device"
#define L_AS_PRODUCT_VERSION "as_product_version"
#define L_AS_INDEX_PRODUCTS "as_index_products"
#define L_AS_VIEW_SPECS "as_view_specs"
#define L_AS_PRODUCT_LIVE "as_product_live"
#define L_AS_PRODUCT_LIVE_ID "as_product_live_id"

/* Every label above, for the check at start. */
#define AS_DB_LABELS(X) \
    X(L_AS_MERCHANTS) \
    X(L_AS_DEVICES) \
    X(L_AS_DEVICE_BY_SLUG) \
    X(L_AS_META_SET) \
    X(L_AS_KEY_BY_HASH) \
    X(L_AS_MANDATE_CURRENT) \
    X(L_AS_MANDATE_CURRENT_LOCK) \
    X(L_AS_MANDATE_GET) \
    X(L_AS_MANDATE_LOCK) \
    X(L_AS_MANDATE_SPENT) \
    X(L_AS_SPENT_STALE) \
    X(L_AS_SPENT_CLEAR) \
    X(L_AS_SPENT_FILL) \
    X(L_AS_QUOTE_INSERT) \
    X(L_AS_QUOTE_GET) \
    X(L_AS_ORDER_INSERT) \
    X(L_AS_ORDER_GET) \
    X(L_AS_ORDER_EVENTS) \
    X(L_AS_ORDER_MOVE) \
    X(L_AS_EVENT_ADD) \
    X(L_AS_ORDERS_EXPIRED) \
    X(L_AS_ORDERS_EXPIRED_ANY) \
    X(L_AS_STOCK_TAKE) \
    X(L_AS_STOCK_GIVE) \
    X(L_AS_OFFER_WITHDRAWN) \
    X(L_AS_CONF_INSERT) \
    X(L_AS_CONF_GET) \
    X(L_AS_CONF_DECIDE) \
    X(L_AS_IDEM_CLAIM) \
    X(L_AS_IDEM_GET) \
    X(L_AS_IDEM_TAKEOVER) \
    X(L_AS_IDEM_FORGET) \
    X(L_AS_IDEM_FINISH) \
    X(L_AS_RETURN_INSERT) \
    X(L_AS_RETURN_GET) \
    X(L_AS_RETURN_BY_ORDER) \
    X(L_AS_QUESTION_INSERT) \
    X(L_AS_PASSKEY_INSERT) \
    X(L_AS_PASSKEYS_OF) \
    X(L_AS_PASSKEY_GET) \
    X(L_AS_PASSKEY_COUNT) \
    X(L_AS_ENROLMENT_INSERT) \
    X(L_AS_ENROLMENT_GET) \
    X(L_AS_ENROLMENT_USE) \
    X(L_AS_CHALLENGE_INSERT) \
    X(L_AS_CHALLENGE_USE) \
    X(L_AS_CHALLENGES_PRUNE) \
    X(L_AS_CHALLENGE_LIVE) \
    X(L_AS_CHALLENGES_DUE) \
    X(L_AS_KEY_INSERT) \
    X(L_AS_KEY_REVOKE) \
    X(L_AS_KEY_LIST) \
    X(L_AS_KEY_GET) \
    X(L_AS_MANDATE_INSERT) \
    X(L_AS_MANDATE_REVOKE) \
    X(L_AS_MANDATE_LIST) \
    X(L_FEED_MERCHANTS) \
    X(L_FEED_DEVICES) \
    X(L_FEED_PRODUCTS) \
    X(L_FEED_OFFERS) \
    X(L_FEED_LOCK) \
    X(L_FEED_MAX_DEVICE) \
    X(L_FEED_MAX_PRODUCT) \
    X(L_FEED_MERCHANT) \
    X(L_FEED_DEVICE) \
    X(L_FEED_PRODUCTS_PUT) \
    X(L_FEED_OFFERS_PUT) \
    X(L_FEED_COMPAT_PUT) \
    X(L_FEED_SPECS_IN) \
    X(L_FEED_SPECS_CLEAR_IN) \
    X(L_FEED_SPECS_PUT) \
    X(L_FEED_STATE_IN) \
    X(L_FEED_MEASURED_PUT) \
    X(L_FEED_SPEC_MEASURED_PUT) \
    X(L_FEED_VERIFICATION_PUT) \
    X(L_FEED_STOCK_SINCE) \
    X(L_FEED_WITHDRAW_MERCHANT) \
    X(L_FEED_WITHDRAW_DEVICE) \
    X(L_FEED_WITHDRAW_PRODUCT) \
    X(L_FEED_WITHDRAW_OFFER) \
    X(L_FEED_WITHDRAW_OFFERS_OF) \
    X(L_FEED_WITHDRAW_OFFERS_OF_MERCHANT) \
    X(L_FEED_OFFERS_OF_MERCHANT) \
    X(L_FEED_WITHDRAW_COMPAT) \
    X(L_FEED_X_MERCHANTS) \
    X(L_FEED_X_DEVICES) \
    X(L_FEED_X_PRODUCTS) \
    X(L_FEED_X_SPECS) \
    X(L_FEED_X_OFFERS) \
    X(L_FEED_X_COMPAT) \
    X(L_AS_OPS_ORDERS) \
    X(L_AS_OPS_RETURNS) \
    X(L_AS_OPS_USERS) \
    X(L_AS_OPS_OFFER_LOCK) \
    X(L_AS_OPS_OFFER_SET) \
    X(L_AS_SEARCH_DEV) \
    X(L_AS_COMPAT_COUNT) \
    X(L_AS_COMPAT_PAGE) \
    X(L_AS_COMPAT_LEFT_OUT) \
    X(L_AS_RANK_SIZES) \
    X(L_AS_RANK_MAX_ID) \
    X(L_AS_RANK_CLEAR) \
    X(L_AS_RANK_PRODUCT) \
    X(L_AS_RANK_SEED) \
    X(L_AS_RANK_OFFERS) \
    X(L_AS_RANK_SET) \
    X(L_AS_RANK_SET_MANY) \
    X(L_AS_VERSION_GET) \
    X(L_AS_LIVE_CHANGES) \
    X(L_AS_LIVE_ASKED) \
    X(L_AS_CATALOGUE_SET) \
    X(L_AS_VERSION_BUMP) \
    X(L_AS_RANK_CHANGES) \
    X(L_AS_INDEX_OFFERS) \
    X(L_AS_INDEX_COMPAT) \
    X(L_AS_OFFERS_STOCK) \
    X(L_AS_PRODUCT_VIEW) \
    X(L_AS_PRODUCT_VIEW_DEVICE) \
    X(L_AS_PRODUCT_VERSION) \
    X(L_AS_INDEX_PRODUCTS) \
    X(L_AS_VIEW_SPECS) \
    X(L_AS_PRODUCT_LIVE) \
    X(L_AS_PRODUCT_LIVE_ID)

#endif
