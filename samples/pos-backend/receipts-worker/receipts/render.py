"""Receipt layout. Fonts and the store logo are loaded once per process."""
import io
from functools import lru_cache

from reportlab.lib.pagesizes import A6
from reportlab.pdfgen import canvas


@lru_cache(maxsize=None)
def store_logo(store_id: int) -> bytes:
    with open(f"/opt/receipts/logos/{store_id}.png", "rb") as fh:
        return fh.read()


def render_pdf(order: dict) -> bytes:
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A6)
    y = 390
    pdf.drawString(20, y, f"Keele Retail - store {order['store_id']}")
    for line in order["lines"]:
        y -= 14
        pdf.drawString(20, y, f"{line['qty']} x {line['name'][:28]}")
        pdf.drawRightString(280, y, f"{line['total']:.2f}")
    pdf.drawRightString(280, y - 24, f"TOTAL {order['total']:.2f} EUR")
    pdf.showPage()
    pdf.save()
    return buf.getvalue()
