"""What the Operations page and the health light read: the pollers' status and poll series,
arrivals, decisions, dead letters and storage sizes (OperationsService). The work itself runs in
unattended/."""
