import streamlit as st
st.title('knowledge')
