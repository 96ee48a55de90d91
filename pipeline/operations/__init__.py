"""Running the engine unattended: the poller, its status and metrics, and OperationsService."""
