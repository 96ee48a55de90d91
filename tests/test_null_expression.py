"""A fix proposal's null guard guards what the error names as null (issue 36; a walkthrough found the demo's
Java NPE, `the return value of "Cart.getCustomer()" is null`, proposed at 0.95 with a guard of `cart`, which
the line before had used already: approved, it would have changed nothing)."""
from __future__ import annotations

from pipeline.analyst.fixes import _null_guard
from pipeline.analyst.null_expression import null_expression

JAVA_LINE = "        BigDecimal rate = order.getBuyer().getTier().rate();\n"


def test_the_helpful_npe_names_the_call_whose_value_was_null_and_the_guard_is_of_that_call():
    said = ['java.lang.NullPointerException: Cannot invoke "com.shop.Buyer.getTier()" because the return value of '
            '"com.shop.Order.getBuyer()" is null']
    assert null_expression(said, JAVA_LINE) == "order.getBuyer()"
    lines = ["class A {\n", "    void f(Order order) {\n", JAVA_LINE, "    }\n", "}\n"]
    guarded = _null_guard(lines, 3, ".java", said)
    assert guarded is not None and guarded[2].strip() == "if (order.getBuyer() == null) {"
    assert guarded[5] == JAVA_LINE  # the failing line follows its guard


def test_a_variable_or_field_the_npe_names_is_guarded_and_an_unnamed_local_falls_back_to_the_receiver():
    line = "    int n = this.items.size() + names.size();\n"
    assert null_expression(['Cannot invoke "java.util.List.size()" because "this.items" is null'], line) == "this.items"
    assert null_expression(['Cannot invoke "java.util.List.size()" because "names" is null'], line) == "names"
    assert null_expression(['Cannot invoke "java.util.List.size()" because "<local4>" is null'], line) is None
    guarded = _null_guard([line], 1, ".java", ['because "<local4>" is null'])
    assert guarded is not None and "a value dereferenced on the next line can be null" in guarded[0]  # `this` is no guard


def test_what_was_read_from_none_or_undefined_names_the_value_before_it():
    assert null_expression(["AttributeError: 'NoneType' object has no attribute 'total'"],
                           "    amount = invoice.customer.total * rate\n") == "invoice.customer"
    assert null_expression(["TypeError: Cannot read properties of undefined (reading 'tier')"],
                           "  const rate = account.profile?.tier.rate;\n") == "account.profile"
    guarded = _null_guard(["    amount = invoice.customer.total * rate\n"], 1, ".py",
                          ["AttributeError: 'NoneType' object has no attribute 'total'"])
    assert guarded is not None and guarded[0].strip() == "if invoice.customer is None:"


def test_an_error_naming_nothing_the_line_holds_leaves_the_first_receiver():
    assert null_expression(["something else failed"], JAVA_LINE) is None
    guarded = _null_guard([JAVA_LINE], 1, ".java", ["something else failed"])
    assert guarded is not None and guarded[0].strip() == "if (order == null) {"
