-- Runs once, when the volume is empty (docker-entrypoint-initdb.d). POSTGRES_DB creates the
-- orchestrator's database "payments"; the gateway-adapter gets its own (README "The ledger
-- decision": it shares nothing with the orchestrator's).
CREATE DATABASE gateway_adapter;
